// Functional-mode overhead of matmul_all_gather: the wall time of a functional run (input
// generation, the three views of which the pipelined one moves and computes data, the golden,
// verification) divided by the time OpenBLAS needs for the same arithmetic (target <= 1.3x).
//
// The arithmetic: the W ranks compute their M/W x K x N row blocks (together one M x K x N
// GEMM), and the golden is one more M x K x N GEMM: 2 GEMMs of 2 M K N flops. The baseline:
// OpenBLAS at as many threads as the host has cores, 2 sgemm calls on fp32 data already widened
// (widening and data generation outside its clock, which favours OpenBLAS).
//
//   build/tests/matmul_all_gather_functional_bench [--benchmark_filter=...]
// prints one line per shape and variant: program wall, BLAS wall, ratio.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/cli/command_line.hpp"
#include "sim/profile.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;

struct Shape {
    int ranks, m, k, n;
};

std::map<std::string, std::pair<double, double>>& results() {  // name -> (program s, blas s)
    static std::map<std::string, std::pair<double, double>> r;
    return r;
}

RunRequest config_of(const Shape& s, const std::string& variant) {
    RunRequest cfg;
    cfg.op = "matmul_all_gather";
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
    double best = 1e30;
    for (auto _ : state) {
        const double t0 = bench::wall_now();
        const ProgramOutput out = run_program(cfg, profile);
        const double dt = bench::wall_now() - t0;
        if (out.results.verification != Verification::Passed) state.SkipWithError("verification failed");
        best = std::min(best, dt);
        state.SetIterationTime(dt);
    }
    results()[name_of(s, v)].first = best;
}

void BM_Blas(benchmark::State& state, Shape s, std::string v) {
    openblas_set_num_threads(bench::host_cores());
    const std::size_t mk = std::size_t(s.m) * s.k, kn = std::size_t(s.k) * s.n;
    std::vector<float> a(mk), b(kn), c(std::size_t(s.m) * s.n);
    for (std::size_t i = 0; i < mk; ++i) a[i] = float(int(i % 3) - 1);
    for (std::size_t i = 0; i < kn; ++i) b[i] = float(int(i % 5) - 2);
    double best = 1e30;
    for (auto _ : state) {
        const double t0 = bench::wall_now();
        for (int g = 0; g < 2; ++g)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k,
                        0.0f, c.data(), s.n);
        const double dt = bench::wall_now() - t0;
        best = std::min(best, dt);
        state.SetIterationTime(dt);
    }
    results()[name_of(s, v)].second = best;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<Shape> shapes = {{2, 2048, 2048, 2048}, {8, 4096, 2048, 2048}};
    const std::vector<std::string> variants = {"fused"};
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
    std::printf("\nmatmul_all_gather functional run vs OpenBLAS for the same arithmetic (2 GEMMs of M x K x N):\n");
    for (const auto& [name, r] : results()) {
        if (r.first <= 0 || r.second <= 0) continue;
        std::printf("  %-28s program %.2f s, OpenBLAS %.2f s: %.2fx\n", name.c_str(), r.first, r.second, r.first / r.second);
    }
    return 0;
}
