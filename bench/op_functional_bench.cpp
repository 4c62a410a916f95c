// Functional mode of every op next to OpenBLAS for the same arithmetic (issues 13, 14 and 18
// part 4: target <= 1.3x), one medium shape per op, every variant.
//
// "The same arithmetic" is what a functional run computes, read off the op's sharding
// (kernels/op_desc.hpp) exactly as the host does:
//   * the ranks' products: each of the W ranks multiplies its rows of A (M/W when A is split by
//     rows, else M) by K (--gk: the rank's K, or after an all-gather of A the whole K) by its
//     columns of B (N/W when B is split by columns, else N); an op that all-gathers A before
//     its GEMM (allgather_gemm, all_gather_matmul: the sharding alone does not say it) has every
//     rank compute the whole M x K x N. Only the pipelined view computes data (the other two
//     views are timed only), so that is one such GEMM per rank;
//   * the golden (host/run/op_inputs.cpp golden_output): one GEMM per contributing rank share,
//     A_r (a_rows x a_cols) x B_r^T (b_rows x a_cols), as it calls them.
// Padding a variant adds (ascend) is the program's own cost: the baseline uses the logical shape.
// The baseline is OpenBLAS at as many threads as the host has cores (both cores here), on fp32
// data already widened, in buffers already touched (warm), the same sgemm calls one after
// another; generating and widening the data is outside its clock. That favours OpenBLAS.
//
// The program: run_program() as `build/tandem` runs it (input generation, the three views of
// which the pipelined one moves and computes data, the golden, verification; not the process
// start, the profile load or writing out/), OpenBLAS at one thread as host/cli/main.cpp sets it.
//
// Program and baseline runs alternate, `--reps` times each (default 3), and each figure is the
// best (lowest) of its runs: wall time, and process CPU time (user + system of every thread,
// CLOCK_PROCESS_CPUTIME_ID), which other load on a shared machine disturbs far less.
//
//   build/tests/op_functional_bench [--op NAME] [--variant NAME] [--reps N] [--shape WxMxKxN]
// prints one line per op and variant (all ops and variants by default, each op at the medium
// shape its description gives, OpDesc::bench_shape, or at --shape) and the load average at the
// start and end.
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/run/blas_threads.hpp"
#include "host/run/op_inputs.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/cli/command_line.hpp"
#include "kernels/registry.hpp"
#include "sim/profile.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;
using kernels::Split;

struct Shape {
    int ranks = 0, m = 0, k = 0, n = 0;
};

struct Gemm {
    int m = 0, k = 0, n = 0;  // C (m x n) = A (m x k) x B^T (n x k)^T
    int count = 0;
};

// The sgemm calls of one functional run (see the header comment).
std::vector<Gemm> arithmetic_of(const ResolvedRun& run) {
    const kernels::Sharding& s = run.sharding();
    const kernels::OpParams& p = run.params;
    const ShardShapes sh = shard_shapes(s, p);
    const int w = p.ranks;
    const bool gathers_a = run.op->name == "allgather_gemm" || run.op->name == "all_gather_matmul";
    std::vector<Gemm> g;
    if (gathers_a) {
        g.push_back(Gemm{p.m, p.k, p.n, w});
    } else {
        g.push_back(Gemm{s.a == Split::Rows ? p.m / w : p.m, p.k, s.b == Split::Cols ? p.n / w : p.n, w});
    }
    // The golden's shares, as golden_output counts them.
    const bool summed = s.k_per_rank || s.a == Split::Cols;
    const bool disjoint = s.a == Split::Rows || s.b == Split::Cols;
    g.push_back(Gemm{sh.a_rows, sh.a_cols, sh.b_rows, (summed || disjoint) ? w : 1});
    return g;
}

double gflop_of(const std::vector<Gemm>& gemms) {
    double f = 0;
    for (const Gemm& g : gemms) f += 2.0 * g.m * g.k * g.n * g.count;
    return f * 1e-9;
}

struct Figures {
    double program_wall = 0, program_cpu = 0, blas_wall = 0, blas_cpu = 0;
};

void keep_min(double& slot, double v) { slot = (slot == 0) ? v : std::min(slot, v); }

// The baseline's buffers, filled (first touched) before any clock starts.
struct BlasOperands {
    std::vector<std::vector<float>> a, b, c;
    explicit BlasOperands(const std::vector<Gemm>& gemms) {
        for (const Gemm& g : gemms) {
            a.emplace_back(static_cast<std::size_t>(g.m) * g.k);
            b.emplace_back(static_cast<std::size_t>(g.n) * g.k);
            c.emplace_back(static_cast<std::size_t>(g.m) * g.n, 0.0f);
            for (std::size_t i = 0; i < a.back().size(); ++i) a.back()[i] = static_cast<float>(static_cast<int>(i % 3) - 1);
            for (std::size_t i = 0; i < b.back().size(); ++i) b.back()[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
        }
    }
};

void run_blas(const std::vector<Gemm>& gemms, BlasOperands& ops) {
    for (std::size_t i = 0; i < gemms.size(); ++i) {
        const Gemm& g = gemms[i];
        for (int c = 0; c < g.count; ++c)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g.m, g.n, g.k, 1.0f, ops.a[i].data(), g.k, ops.b[i].data(),
                        g.k, 0.0f, ops.c[i].data(), g.n);
    }
}

std::string load_average() {
    double l[3] = {0, 0, 0};
    if (getloadavg(l, 3) != 3) return "?";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", l[0], l[1], l[2]);
    return buf;
}

bool parse_shape(const std::string& text, Shape& s) {
    return std::sscanf(text.c_str(), "%dx%dx%dx%d", &s.ranks, &s.m, &s.k, &s.n) == 4;
}

}  // namespace

int main(int argc, char** argv) {
    std::string only_op, only_variant;
    int reps = 3;
    Shape forced;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--op" && has_value) {
            only_op = argv[++i];
        } else if (a == "--variant" && has_value) {
            only_variant = argv[++i];
        } else if (a == "--reps" && has_value) {
            reps = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--shape" && has_value && parse_shape(argv[i + 1], forced)) {
            ++i;
        } else {
            std::fprintf(stderr, "usage: %s [--op NAME] [--variant NAME] [--reps N] [--shape WxMxKxN]\n", argv[0]);
            return 2;
        }
    }
    use_single_threaded_blas();  // as host/cli/main.cpp at start-up
    const Profile profile = load_profile_by_soc("Ascend910B1", default_profile_dir());
    std::printf("functional run vs OpenBLAS (%d threads, warm fp32 buffers) for the same arithmetic, best of %d; "
                "load average at start: %s\n",
                bench::host_cores(), reps, load_average().c_str());
    std::printf("%-22s %-18s %-18s %7s | %-28s | %-28s\n", "op", "variant", "W x M x K x N", "GFLOP",
                "wall: program / BLAS = ratio", "CPU: program / BLAS = ratio");
    bool all_passed = true;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        if (!only_op.empty() && op->name != only_op) continue;
        // The op's medium shape (OpDesc::bench_shape, accepted by every variant) unless --shape.
        const Shape s = forced.ranks > 0 ? forced
                                         : Shape{op->bench_shape.ranks, op->bench_shape.m, op->bench_shape.k,
                                                 op->bench_shape.n};
        for (const kernels::VariantDesc& v : op->variants) {
            if (!only_variant.empty() && v.name != only_variant) continue;
            RunRequest request;
            request.op = op->name;
            request.variant = v.name;
            request.ranks = s.ranks;
            request.m = s.m;
            request.k = s.k;
            request.n = s.n;
            const ResolvedRun cfg = resolve_run(request, profile);  // the ops facade
            const std::vector<Gemm> gemms = arithmetic_of(cfg);
            BlasOperands operands(gemms);
            Figures f;
            for (int rep = 0; rep < reps; ++rep) {
                // As host/cli/main.cpp. The pool threads of the previous baseline run spin on for
                // about 0.1 s (host/run/blas_threads.hpp): they are left to go to sleep, not charged
                // to the program, and not shut down (the baseline keeps its warm pool).
                openblas_set_num_threads(1);
                bench::wait_until_process_idle();
                double t0 = bench::wall_now(), c0 = bench::cpu_now();
                const ProgramOutput out = run_program(cfg, profile);
                keep_min(f.program_wall, bench::wall_now() - t0);
                keep_min(f.program_cpu, bench::cpu_now() - c0);
                if (out.results.verification != Verification::Passed) {
                    std::fprintf(stderr, "%s %s: verification failed\n", op->name.c_str(), v.name.c_str());
                    all_passed = false;
                }
                openblas_set_num_threads(bench::host_cores());
                t0 = bench::wall_now();
                c0 = bench::cpu_now();
                run_blas(gemms, operands);
                keep_min(f.blas_wall, bench::wall_now() - t0);
                keep_min(f.blas_cpu, bench::cpu_now() - c0);
            }
            const std::string shape = std::to_string(s.ranks) + "x" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                                      std::to_string(s.n);
            std::printf("%-22s %-18s %-18s %7.1f | %5.2f s / %5.2f s = %5.2fx | %5.2f s / %5.2f s = %5.2fx %s\n",
                        op->name.c_str(), v.name.c_str(), shape.c_str(), gflop_of(gemms), f.program_wall, f.blas_wall,
                        f.program_wall / f.blas_wall, f.program_cpu, f.blas_cpu, f.program_cpu / f.blas_cpu,
                        f.program_cpu / f.blas_cpu <= 1.3 ? "(CPU <= 1.3x)" : "(CPU > 1.3x)");
            std::fflush(stdout);
        }
    }
    std::printf("load average at end: %s\n", load_average().c_str());
    return all_passed ? 0 : 1;
}
