// AllGather+GEMM on a simulated 2-rank Ascend 910B1 cluster through the installed API:
// C = [A_0; A_1] x B on every rank, checked against a host GEMM, and its simulated time.
#include <cstdio>
#include <vector>

#include <tandem/tandem.hpp>

int main() {
    try {
        tandem::Context ctx({.soc = "Ascend910B1", .ranks = 2});
        const int m = 256, k = 256, n = 256, rows = m / 2;
        std::vector<std::vector<float>> a(2, std::vector<float>(rows * k));
        std::vector<float> b(k * n);
        for (int r = 0; r < 2; ++r)
            for (int i = 0; i < rows * k; ++i) a[r][i] = float((i + r) % 3) - 1.0f;
        for (int i = 0; i < k * n; ++i) b[i] = float(i % 5) - 2.0f;
        tandem::Tensor A = ctx.from_host(rows, k, tandem::DataType::F16, a);
        tandem::Tensor B = ctx.from_host(k, n, tandem::DataType::F16, {b, b});
        tandem::Tensor C = ctx.zeros(m, n, tandem::DataType::F32);
        tandem::Workspace ws = ctx.ops().run("allgather_gemm", C, A, B);
        for (int r = 0; r < 2; ++r) {
            const std::vector<float> c = C.to_host(r);
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    float want = 0;
                    for (int kk = 0; kk < k; ++kk) want += a[i / rows][(i % rows) * k + kk] * b[kk * n + j];
                    if (c[i * n + j] != want) {
                        std::fprintf(stderr, "rank %d C[%d][%d] = %g, expected %g\n", r, i, j, c[i * n + j], want);
                        return 1;
                    }
                }
        }
        std::printf("allgather_gemm on %s x2: %.2f us simulated, output verified\n", ctx.profile_name().c_str(),
                    ws.results().pipelined_us);
        return 0;
    } catch (const tandem::api::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
