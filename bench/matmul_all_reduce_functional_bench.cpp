// Functional-mode overhead of matmul_all_reduce (or, with --op, another op whose ranks each
// multiply their own A_r x B_r and sum: matmul_reduce_scatter): the wall time of a functional run (input
// generation, the three views of which the pipelined one moves and computes data, the golden,
// verification) divided by the time OpenBLAS needs for the same arithmetic (target <= 1.3x).
//
// The arithmetic: each of the W ranks computes its partial A_r x B_r (M x K x N), and the golden
// is one GEMM over K_total = W x K, i.e. W more M x K x N GEMMs: 2W GEMMs of 2 M K N flops. The
// baseline: OpenBLAS at as many threads as the host has cores, 2W sgemm calls on fp32 data
// already widened (widening and data generation outside its clock, which favours OpenBLAS).
//
//   build/tests/matmul_all_reduce_functional_bench [--op matmul_reduce_scatter] [--benchmark_filter=...]
//                                                  [--benchmark_repetitions=N]
// prints one line per shape and variant (every variant of the op, in the registry's order):
// program and BLAS wall time and their ratio, then the same
// in process CPU time (user + system of every thread, clock_gettime(CLOCK_PROCESS_CPUTIME_ID)),
// which other load on a shared machine disturbs far less than wall time. Each figure is the best
// (lowest) over the repetitions.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/cli/command_line.hpp"
#include "kernels/registry.hpp"
#include "sim/profile.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;

struct Shape {
    int ranks, m, k, n;
};

struct Figures {
    double program_s = 0, blas_s = 0;          // wall
    double program_cpu_s = 0, blas_cpu_s = 0;  // process CPU time
};

std::map<std::string, Figures>& results() {  // name -> figures
    static std::map<std::string, Figures> r;
    return r;
}

// The op under test (--op; the same arithmetic: each rank's partial over its own K, summed).
std::string& op_name() {
    static std::string op = "matmul_all_reduce";
    return op;
}

// Keeps the best (lowest) of repeated measurements (--benchmark_repetitions).
void keep_min(double& slot, double v) { slot = (slot == 0) ? v : std::min(slot, v); }

RunRequest config_of(const Shape& s, const std::string& variant) {
    RunRequest cfg;
    cfg.op = op_name();
    cfg.variant = variant;
    cfg.ranks = s.ranks;
    cfg.m = s.m;
    cfg.k = s.k;
    cfg.n = s.n;
    return cfg;
}

std::string name_of(const Shape& s, const std::string& v) {
    return v + " " + std::to_string(s.ranks) + "x" + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
           std::to_string(s.n);
}

void BM_Program(benchmark::State& state, Shape s, std::string v) {
    openblas_set_num_threads(1);  // as host/cli/main.cpp
    const Profile profile = load_profile_by_soc("Ascend910B1", default_profile_dir());
    const ResolvedRun cfg = resolve_run(config_of(s, v), profile);  // the ops facade
    Figures& f = results()[name_of(s, v)];
    for (auto _ : state) {
        const double t0 = bench::wall_now(), c0 = bench::cpu_now();
        const ProgramOutput out = run_program(cfg, profile);
        const double dt = bench::wall_now() - t0;
        keep_min(f.program_cpu_s, bench::cpu_now() - c0);
        if (out.results.verification != Verification::Passed) state.SkipWithError("verification failed");
        keep_min(f.program_s, dt);
        state.SetIterationTime(dt);
    }
}

void BM_Blas(benchmark::State& state, Shape s, std::string v) {
    openblas_set_num_threads(bench::host_cores());
    const std::size_t mk = std::size_t(s.m) * s.k, kn = std::size_t(s.k) * s.n;
    std::vector<float> a(mk), b(kn), c(std::size_t(s.m) * s.n);
    for (std::size_t i = 0; i < mk; ++i) a[i] = float(int(i % 3) - 1);
    for (std::size_t i = 0; i < kn; ++i) b[i] = float(int(i % 5) - 2);
    Figures& f = results()[name_of(s, v)];
    for (auto _ : state) {
        const double t0 = bench::wall_now(), c0 = bench::cpu_now();
        for (int g = 0; g < 2 * s.ranks; ++g)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k,
                        0.0f, c.data(), s.n);
        const double dt = bench::wall_now() - t0;
        keep_min(f.blas_cpu_s, bench::cpu_now() - c0);
        keep_min(f.blas_s, dt);
        state.SetIterationTime(dt);
    }
}

}  // namespace

int main(int argc, char** argv) {
    // --op NAME (taken out of argv before Google Benchmark sees it).
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--op" && i + 1 < argc) {
            op_name() = argv[++i];
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
    if (op_name() != "matmul_all_reduce" && op_name() != "matmul_reduce_scatter") {
        std::fprintf(stderr, "--op %s: this bench measures the ops whose ranks sum their partials (matmul_all_reduce, "
                             "matmul_reduce_scatter)\n", op_name().c_str());
        return 2;
    }
    // Both shapes: N / W whole 256-wide tiles, as matmul_reduce_scatter needs.
    const std::vector<Shape> shapes = {{2, 2048, 2048, 1024}, {4, 2048, 1024, 2048}};
    std::vector<std::string> variants;
    for (const tandem::kernels::VariantDesc& v : tandem::kernels::find_op(op_name()).variants) variants.push_back(v.name);
    for (const Shape& s : shapes) {
        for (const std::string& v : variants) {
            benchmark::RegisterBenchmark(("Program/" + name_of(s, v)).c_str(), BM_Program, s, v)
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kSecond);
            benchmark::RegisterBenchmark(("Blas/" + name_of(s, v)).c_str(), BM_Blas, s, v)
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kSecond);
        }
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::printf("\n%s functional run vs OpenBLAS for the same arithmetic (2W GEMMs of M x K x N):\n", op_name().c_str());
    for (const auto& [name, r] : results()) {
        if (r.program_s <= 0 || r.blas_s <= 0) continue;  // filtered out
        std::printf("  %-28s wall: program %.2f s, OpenBLAS %.2f s: %.2fx   CPU time: program %.2f s, OpenBLAS %.2f s: "
                    "%.2fx   (target <= 1.3x)\n",
                    name.c_str(), r.program_s, r.blas_s, r.program_s / r.blas_s, r.program_cpu_s, r.blas_cpu_s,
                    r.program_cpu_s / r.blas_cpu_s);
    }
    return 0;
}
