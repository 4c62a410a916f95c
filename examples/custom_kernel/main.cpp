// Runs the user-written gemm_all_to_all op through the API, as a shipped op is run, and checks
// every rank's output against a golden computed here. Exit code 0 when every element matches.
//   build/examples/custom_kernel/custom_kernel [ranks M K N]     (defaults: 4 512 320 2048)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tandem/tandem.hpp>

#include "examples/custom_kernel/gemm_all_to_all.hpp"

int main(int argc, char** argv) {
    const int ranks = argc > 4 ? std::atoi(argv[1]) : 4;
    const int m = argc > 4 ? std::atoi(argv[2]) : 512;   // n*base-m multiple
    const int k = argc > 4 ? std::atoi(argv[3]) : 320;   // anything: padded to base-n
    const int n = argc > 4 ? std::atoi(argv[4]) : 2048;  // n*base-n multiple
    try {
        tandem::ContextOptions options;
        options.soc = "Ascend910B1";
        options.ranks = ranks;
        tandem::Context ctx(options);
        ctx.ops().add(gemm_all_to_all::make_op());

        // Global A (M x K) and B (K x N): small integers, exact in fp16 and in the fp32 sums.
        std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i * 7 % 5) - 2);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i * 3 % 3) - 1);
        const int rows = m / ranks;  // rank r holds rows [r*rows, (r+1)*rows) of A
        const int cols = n / ranks;  // and receives columns [r*cols, (r+1)*cols) of C
        std::vector<std::vector<float>> a_r, b_r;
        for (int r = 0; r < ranks; ++r) {
            a_r.emplace_back(a.begin() + static_cast<std::ptrdiff_t>(r) * rows * k, a.begin() + static_cast<std::ptrdiff_t>(r + 1) * rows * k);
            b_r.push_back(b);
        }
        tandem::Tensor A = ctx.from_host(rows, k, tandem::DataType::F16, a_r);
        tandem::Tensor B = ctx.from_host(k, n, tandem::DataType::F16, b_r);
        tandem::Tensor C = ctx.zeros(m, cols, tandem::DataType::F32);

        tandem::OpConfig config;
        config.all_views = true;  // also time the GEMM alone and "GEMM, then all-to-all"
        tandem::Workspace ws = ctx.ops().run(gemm_all_to_all::kOpName, C, A, B, nullptr, false, config);

        long long wrong = 0;
        for (int r = 0; r < ranks; ++r) {
            const std::vector<float> got = C.to_host(r);
            for (int i = 0; i < m; ++i) {
                for (int j = 0; j < cols; ++j) {
                    float want = 0;
                    for (int kk = 0; kk < k; ++kk) want += a[static_cast<std::size_t>(i) * k + kk] * b[static_cast<std::size_t>(kk) * n + r * cols + j];
                    if (got[static_cast<std::size_t>(i) * cols + j] != want) ++wrong;
                }
            }
        }
        const tandem::OpResults& res = ws.results();
        std::printf("%s %d ranks, M=%d K=%d N=%d fp16 -> fp32: pipelined %.2f us, compute-only %.2f us, "
                    "sequential %.2f + %.2f us\n",
                    res.op.c_str(), ranks, m, k, n, res.pipelined_us, *res.compute_only_us, *res.seq_compute_us, *res.seq_comm_us);
        if (wrong != 0) {
            std::printf("FAILED: %lld of %lld output elements differ from the golden\n", wrong, static_cast<long long>(m) * n);
            return 1;
        }
        std::printf("verified: every rank's %d x %d block equals the golden\n", m, cols);
        return 0;
    } catch (const tandem::api::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
}
