// Functional-mode overhead: the simulator's wall time for a functional AllGather+GEMM run divided
// by the time OpenBLAS alone needs for the same arithmetic (issue 6, item 4; target <= 1.3x).
//
// The arithmetic of one functional run (host/run/program.cpp, host/run/op_session.cpp), as the issue
// defines it ("every rank's GEMM plus the golden"):
//   * the pipelined view, in which every rank computes the full C = A*B (M x K x N) from fp16
//     data widened to fp32 (TMATMUL chains, computed as batched sgemms when the kernel ends; see
//     sim/isa/deferred_drain.hpp); the compute-only and sequential
//     views are only timed (their C is cleared unread), so they move and compute no data,
//   * plus the golden: one more M x K x N sgemm (host/run/op_inputs.cpp golden_output).
//   => G = ranks + 1 GEMMs of 2*M*K*N flops each.
//
// Per shape, five measurements (each one iteration, wall clock; with --benchmark_repetitions=N the
// summary keeps the best of N of each):
//   Program    run_program(): input generation, the three views, the golden and
//              verification -- the functional run as `allgather_gemm` does it (minus process
//              start, profile load and writing out/output_rank<r>.bin). OpenBLAS is set to one
//              thread, as host/cli/main.cpp does (the stream threads run in parallel).
//   Views      run_op_views() alone on pre-generated inputs: the three views only (one of
//              them functional).
//   Parts      the program's other steps one by one (make_inputs, golden_output at one OpenBLAS
//              thread, verify_rank per rank), to show where Program - Views goes.
//   Blas2T     the OpenBLAS baseline with the host's cores busy the way the simulator keeps them:
//              openblas_set_num_threads(1) and one std::thread per host core, each computing its
//              row share (M / cores rows) of all G GEMMs (same flops, perfectly balanced).
//   BlasMT     the OpenBLAS baseline threaded by OpenBLAS itself: openblas_set_num_threads(cores)
//              and G full-size sgemm calls one after another.
//   Both baselines time only cblas_sgemm on already-widened fp32 data (the golden's layout:
//   A row-major, B transposed); widening and data generation are outside their clock, which
//   favours OpenBLAS. The better (faster) baseline is used for the ratios:
//     (a) whole run:  Program wall / best baseline for G = ranks + 1 GEMMs
//     (b) the views:  Views wall / best baseline for `ranks` GEMMs (what the simulation itself
//                     costs next to the arithmetic it does)
//         (the baseline for `ranks` GEMMs is the measured G-GEMM time * ranks / G: the GEMMs
//          are identical, so the baseline is linear in their count).
//   The same two ratios are also given in process CPU time (all threads), which another load on
//   the machine disturbs less than wall time; and "cores busy" = CPU time / wall time.
//
// Shapes (ranks x M x K x N): 2x2048x2048x1024 (the default run) and 2x4096x4096x2048 by
// default; --large adds 4x4096x4096x4096 (about 85 s more on 2 idle cores;
// --large --benchmark_filter=4x4096 runs only it). --small runs only the
// first. Other flags are Google Benchmark's.
//
// One summary line per shape is printed at the end, plus the process peak RSS (getrusage; the
// process peak so far, so the line of the largest shape run is the one that means something).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/run/op_session.hpp"
#include "host/run/program.hpp"
#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "host/cli/command_line.hpp"
#include "host/run/verify.hpp"
#include "sim/mem/fp16_widen.hpp"
#include "sim/profile.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;

using Shape = std::array<int, 4>;  // ranks, m, k, n

struct ShapeResult {
    double program_s = 0;     // Program wall
    double views_s = 0;       // Views wall
    double blas2t_s = 0;      // G GEMMs, cores x single-threaded OpenBLAS
    double blasmt_s = 0;      // G GEMMs, multithreaded OpenBLAS
    std::int64_t instructions = 0;
    bool verified = false;
    long peak_rss_kib = 0;    // process peak after the Program run
    int runs = 0;             // Program measurements (best of `runs` is reported)
    // Process CPU seconds (all threads) of the same measurements: less sensitive to other load
    // on the machine than wall time, and a measure of how busy the simulator keeps the cores.
    double program_cpu_s = 0, views_cpu_s = 0, blas2t_cpu_s = 0, blasmt_cpu_s = 0;
    double inputs_s = 0;      // Parts: make_inputs
    double golden_s = 0;      // Parts: golden_gemm (OpenBLAS at one thread, as in the program)
    double verify_s = 0;      // Parts: verify_rank for every rank
};

// The functional TMATMUL_ACC of one K step of the seed's tile (sim/isa/isa_cube.cpp): widen the
// fp16 L0A (base-m x base-n/4) and L0B (base-n/4 x base-n) tiles with the simulator's own
// widening routine (sim/mem/fp16_widen.hpp), then sgemm accumulating into the fp32 L0C tile. GFLOP/s with and without the widening.
std::map<Shape, ShapeResult>& results() {
    static std::map<Shape, ShapeResult> r;
    return r;
}

// Keeps the best (lowest) of repeated measurements (--benchmark_repetitions).
void keep_min(double& slot, double v) { slot = (slot == 0) ? v : std::min(slot, v); }

using tandem::bench::cpu_now;
const auto now_s = tandem::bench::wall_now;
using tandem::bench::host_cores;
using tandem::bench::peak_rss_kib;

int gemm_count(const Shape& s) { return s[0] + 1; }

double gemm_flops(const Shape& s) { return 2.0 * s[1] * s[2] * s[3]; }

const Profile& profile() {
    static const Profile p = load_profile_by_soc("Ascend910B1", default_profile_dir());
    return p;
}

// The run's config exactly as the command line `allgather_gemm -n R --gm M --gk K --gn N` makes it.
ResolvedRun config_of(const Shape& s) {
    const std::array<std::string, 9> args = {"allgather_gemm", "-n", std::to_string(s[0]), "--gm", std::to_string(s[1]),
                                             "--gk", std::to_string(s[2]), "--gn", std::to_string(s[3])};
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    return resolve_run(parse_command_line(static_cast<int>(argv.size()), argv.data()).run, profile());
}

std::string shape_name(const Shape& s) {
    return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + "x" + std::to_string(s[3]);
}

void BM_Program(benchmark::State& state, Shape s) {
    openblas_set_num_threads(1);  // as host/cli/main.cpp
    const ResolvedRun cfg = config_of(s);
    ShapeResult& res = results()[s];
    for (auto _ : state) {
        const double t0 = now_s(), c0 = cpu_now();
        const ProgramOutput out = run_program(cfg, profile());
        const double wall = now_s() - t0;
        keep_min(res.program_cpu_s, cpu_now() - c0);
        state.SetIterationTime(wall);
        keep_min(res.program_s, wall);
        ++res.runs;
        res.instructions = out.bench.instructions;
        res.verified = out.results.verification == Verification::Passed;
        if (!res.verified) state.SkipWithError("verification did not pass");
    }
    res.peak_rss_kib = peak_rss_kib();
    state.counters["instr"] = static_cast<double>(res.instructions);
    state.counters["verified"] = res.verified ? 1 : 0;
    state.counters["peak_rss_MiB"] = static_cast<double>(res.peak_rss_kib) / 1024.0;
}

void BM_Views(benchmark::State& state, Shape s) {
    openblas_set_num_threads(1);
    const ResolvedRun cfg = config_of(s);
    const OpInputs inputs = make_inputs(cfg);
    ShapeResult& res = results()[s];
    for (auto _ : state) {
        const double t0 = now_s(), c0 = cpu_now();
        const ViewsOutcome out = run_op_views(profile(), cfg, &inputs);
        const double wall = now_s() - t0;
        keep_min(res.views_cpu_s, cpu_now() - c0);
        state.SetIterationTime(wall);
        keep_min(res.views_s, wall);
        benchmark::DoNotOptimize(out.instructions);
    }
    state.counters["GFLOP/s"] = s[0] * gemm_flops(s) / res.views_s / 1e9;
}

// The program's steps outside the views, timed one by one with the same functions:
// make_inputs, golden_output (with OpenBLAS at one thread, as host/cli/main.cpp leaves it) and
// verify_rank for every rank (checked against the golden itself: the same work).
void BM_Parts(benchmark::State& state, Shape s) {
    openblas_set_num_threads(1);
    const ResolvedRun cfg = config_of(s);
    ShapeResult& res = results()[s];
    for (auto _ : state) {
        double t0 = now_s();
        const OpInputs in = make_inputs(cfg);
        const double inputs_s = now_s() - t0;
        t0 = now_s();
        const std::vector<float> golden = golden_output(cfg.sharding(), cfg.params, in);
        const double golden_s = now_s() - t0;
        t0 = now_s();
        bool passed = true;
        for (int r = 0; r < cfg.params.ranks; ++r) passed = verify_rank(r, golden.data(), golden).passed && passed;
        const double verify_s = now_s() - t0;
        state.SetIterationTime(inputs_s + golden_s + verify_s);
        keep_min(res.inputs_s, inputs_s);
        keep_min(res.golden_s, golden_s);
        keep_min(res.verify_s, verify_s);
        if (!passed) state.SkipWithError("golden does not verify against itself");
    }
    state.counters["inputs_s"] = res.inputs_s;
    state.counters["golden_s"] = res.golden_s;
    state.counters["verify_s"] = res.verify_s;
}

// The golden's operands, widened once: A (M x K) and B transposed (N x K), fp32.
struct BlasOperands {
    std::vector<float> a, bt, c;
};

BlasOperands widened_operands(const Shape& s) {
    const ResolvedRun cfg = config_of(s);
    const OpInputs in = make_inputs(cfg);
    BlasOperands op;
    for (const HostMatrix& slice : in.a) {
        const std::size_t at = op.a.size();
        const std::size_t count = slice.bytes.size() / 2;
        op.a.resize(at + count);
        widen_halves(slice.halves(), op.a.data() + at, count);
    }
    op.bt.resize(in.b_t.front().bytes.size() / 2);
    widen_halves(in.b_t.front().halves(), op.bt.data(), op.bt.size());
    op.c.assign(static_cast<std::size_t>(s[1]) * static_cast<std::size_t>(s[3]), 0.0f);
    return op;
}

void sgemm_rows(BlasOperands& op, const Shape& s, int row0, int rows) {
    const int k = s[2], n = s[3];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f, op.a.data() + std::size_t(row0) * k, k,
                op.bt.data(), k, 0.0f, op.c.data() + std::size_t(row0) * n, n);
}

void BM_Blas2T(benchmark::State& state, Shape s) {
    BlasOperands op = widened_operands(s);
    const int cores = host_cores();
    const int g = gemm_count(s);
    openblas_set_num_threads(1);
    ShapeResult& res = results()[s];
    for (auto _ : state) {
        const double t0 = now_s(), c0 = cpu_now();
        std::vector<std::thread> threads;
        for (int t = 0; t < cores; ++t) {
            const int row0 = static_cast<int>(static_cast<std::int64_t>(s[1]) * t / cores);
            const int row1 = static_cast<int>(static_cast<std::int64_t>(s[1]) * (t + 1) / cores);
            threads.emplace_back([&, row0, row1] {
                for (int i = 0; i < g; ++i) sgemm_rows(op, s, row0, row1 - row0);
            });
        }
        for (std::thread& th : threads) th.join();
        const double wall = now_s() - t0;
        keep_min(res.blas2t_cpu_s, cpu_now() - c0);
        state.SetIterationTime(wall);
        keep_min(res.blas2t_s, wall);
    }
    state.counters["gemms"] = g;
    state.counters["GFLOP/s"] = g * gemm_flops(s) / res.blas2t_s / 1e9;
}

void BM_BlasMT(benchmark::State& state, Shape s) {
    BlasOperands op = widened_operands(s);
    const int g = gemm_count(s);
    openblas_set_num_threads(host_cores());
    ShapeResult& res = results()[s];
    for (auto _ : state) {
        const double t0 = now_s(), c0 = cpu_now();
        for (int i = 0; i < g; ++i) sgemm_rows(op, s, 0, s[1]);
        const double wall = now_s() - t0;
        keep_min(res.blasmt_cpu_s, cpu_now() - c0);
        state.SetIterationTime(wall);
        keep_min(res.blasmt_s, wall);
    }
    openblas_set_num_threads(1);
    state.counters["gemms"] = g;
    state.counters["GFLOP/s"] = g * gemm_flops(s) / res.blasmt_s / 1e9;
}

void register_shape(const Shape& s) {
    const std::string name = shape_name(s);
    for (auto [label, fn] : {std::pair{"Program", &BM_Program}, std::pair{"Views", &BM_Views}, std::pair{"Parts", &BM_Parts},
                             std::pair{"Blas2T", &BM_Blas2T}, std::pair{"BlasMT", &BM_BlasMT}}) {
        benchmark::RegisterBenchmark((std::string("functional/") + label + "/" + name).c_str(), fn, s)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
    }
}

void print_summary() {
    for (const auto& [s, r] : results()) {
        if (r.program_s == 0 || r.blas2t_s == 0 || r.blasmt_s == 0) continue;  // filtered out
        const int g = gemm_count(s);
        const bool mt_better = r.blasmt_s < r.blas2t_s;
        const double best = std::min(r.blas2t_s, r.blasmt_s);
        const double views_blas = best * s[0] / g;
        std::printf("functional_overhead: %s (ranks x M x K x N), %d GEMMs of %.1f GFLOP (%d ranks + golden), "
                    "%d host cores:\n",
                    shape_name(s).c_str(), g, gemm_flops(s) / 1e9, s[0], host_cores());
        std::printf("  simulator: program %.2f s (best of %d; verification %s, %.0f simulated instructions), three views alone %.2f s (one functional)\n",
                    r.program_s, r.runs, r.verified ? "PASSED" : "FAILED", static_cast<double>(r.instructions), r.views_s);
        if (r.golden_s > 0)
            std::printf("  outside the views (measured apart): inputs %.2f s, golden %.2f s (OpenBLAS 1 thread), "
                        "verification %.2f s; program - views - these = %.2f s\n",
                        r.inputs_s, r.golden_s, r.verify_s, r.program_s - r.views_s - r.inputs_s - r.golden_s - r.verify_s);
        std::printf("  OpenBLAS %d GEMMs: %.2f s with %d threads x 1-thread sgemm (%.1f GFLOP/s), %.2f s multithreaded "
                    "(%.1f GFLOP/s); best: %s\n",
                    g, r.blas2t_s, host_cores(), g * gemm_flops(s) / r.blas2t_s / 1e9, r.blasmt_s,
                    g * gemm_flops(s) / r.blasmt_s / 1e9, mt_better ? "multithreaded" : "per-thread");
        std::printf("  (a) whole run: %.2f x OpenBLAS (%.2f s / %.2f s)   (b) the views: %.2f x OpenBLAS "
                    "(%.2f s / %.2f s)   target <= 1.3x   [vs the other baseline: %.2f x, %.2f x]\n",
                    r.program_s / best, r.program_s, best, r.views_s / views_blas, r.views_s, views_blas,
                    r.program_s / std::max(r.blas2t_s, r.blasmt_s),
                    r.views_s / (std::max(r.blas2t_s, r.blasmt_s) * s[0] / g));
        const double best_cpu = std::min(r.blas2t_cpu_s, r.blasmt_cpu_s);
        std::printf("  CPU time (all threads): program %.2f s (%.2f cores busy on average), views %.2f s (%.2f cores), "
                    "OpenBLAS %.2f s / %.2f s; CPU-time ratio (a) %.2f x, (b) %.2f x\n",
                    r.program_cpu_s, r.program_cpu_s / r.program_s, r.views_cpu_s, r.views_cpu_s / r.views_s,
                    r.blas2t_cpu_s, r.blasmt_cpu_s, r.program_cpu_s / best_cpu, r.views_cpu_s / (best_cpu * s[0] / g));
        std::printf("  peak RSS after the program run: %.0f MiB (process peak so far)\n",
                    static_cast<double>(r.peak_rss_kib) / 1024.0);
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool large = false, small = false;
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--large") == 0) large = true;
        else if (std::strcmp(argv[i], "--small") == 0) small = true;
        else rest.push_back(argv[i]);
    }
    std::vector<Shape> shapes = {{2, 2048, 2048, 1024}};
    if (!small) shapes.push_back({2, 4096, 4096, 2048});
    if (large) shapes.push_back({4, 4096, 4096, 4096});
    int rest_argc = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_argc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
    for (const Shape& s : shapes) register_shape(s);
    std::printf("OpenBLAS: %s\n", openblas_get_config());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    print_summary();
    return 0;
}
