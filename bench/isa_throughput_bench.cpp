// Simulator speed: simulated tile instructions per host second for a timing-only toy kernel.
//
// Each rank runs one kernel of 24 AIC blocks (one per cube core); every block runs a
// double-buffered K loop in the Ascend style: TLOAD of an A and a B slice into L1 (MTE2),
// TEXTRACT into L0A/L0B (MTE1), TMATMUL_ACC (M), with set_flag/wait_flag between the pipes, and
// a final TSTORE of the accumulator (FIX). Every instruction, flags included, counts once
// (KernelStats::instructions summed over ranks).
//
// Counters:
//   instr          simulated instructions per iteration
//   instr/s        per host (wall-clock) second
//   instr/core-s   per host core: instructions per second of process CPU time, i.e. what one
//                  busy host core gets through (all threads together, including the stream
//                  threads that the benchmark's own CPU timer does not see)
//   host_threads   host threads of the run (a host thread and a stream thread per rank)
// A one-line summary is printed at the end.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/host_measure.hpp"
#include "sim/host_threads.hpp"
#include "sim/isa/isa.hpp"
#include "sim/profile.hpp"
#include "sim/runtime/runtime.hpp"

namespace {

using namespace tandem;

constexpr int kM = 128, kN = 128, kKt = 64;

const Profile& profile() {
    static const Profile p = load_profile_by_soc("Ascend910B1", default_profile_dir());
    return p;
}

Task toy_gemm_block(BlockCtx& blk, const GmAllocation& a, const GmAllocation& b, const GmAllocation& c, int steps) {
    const int K = kKt * steps;
    Tile* aL1[2];
    Tile* bL1[2];
    Tile* aL0[2];
    Tile* bL0[2];
    for (int i = 0; i < 2; ++i) {
        aL1[i] = &blk.alloc_tile(MemKind::L1, kM, kKt, DType::F16, "aMat");
        bL1[i] = &blk.alloc_tile(MemKind::L1, kKt, kN, DType::F16, "bMat");
        aL0[i] = &blk.alloc_tile(MemKind::L0A, kM, kKt, DType::F16, "aTile");
        bL0[i] = &blk.alloc_tile(MemKind::L0B, kKt, kN, DType::F16, "bTile");
    }
    Tile& acc = blk.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "cTile");
    const GmTensor A(a, 0, kM, K, K, DType::F16);
    const GmTensor B(b, 0, K, kN, kN, DType::F16);
    for (int i = 0; i < 2; ++i) {
        set_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
        set_flag(blk, PIPE_M, PIPE_MTE1, i);
    }
    for (int k = 0; k < steps; ++k) {
        const int p = k % 2;
        wait_flag(blk, PIPE_MTE1, PIPE_MTE2, p);
        co_await TLOAD(*aL1[p], A.sub(0, k * kKt, kM, kKt));
        co_await TLOAD(*bL1[p], B.sub(k * kKt, 0, kKt, kN));
        set_flag(blk, PIPE_MTE2, PIPE_MTE1, p);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE1, p);
        wait_flag(blk, PIPE_M, PIPE_MTE1, p);
        TEXTRACT(*aL0[p], *aL1[p], 0, 0);
        TEXTRACT(*bL0[p], *bL1[p], 0, 0);
        set_flag(blk, PIPE_MTE1, PIPE_MTE2, p);
        set_flag(blk, PIPE_MTE1, PIPE_M, p);
        wait_flag(blk, PIPE_MTE1, PIPE_M, p);
        if (k == 0) TMATMUL(acc, *aL0[p], *bL0[p]);
        else TMATMUL_ACC(acc, *aL0[p], *bL0[p]);
        set_flag(blk, PIPE_M, PIPE_MTE1, p);
    }
    for (int i = 0; i < 2; ++i) {
        wait_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
        wait_flag(blk, PIPE_M, PIPE_MTE1, i);
    }
    set_flag(blk, PIPE_M, PIPE_FIX, 0);
    wait_flag(blk, PIPE_M, PIPE_FIX, 0);
    co_await TSTORE(GmTensor(c, std::int64_t{blk.block_idx()} * kM * kN * 4, kM, kN, kN, DType::F32), acc);
}

struct Result {
    double instr_per_s = 0;
    double instr_per_core_s = 0;
    double instr = 0;
};
std::map<std::pair<int, int>, Result>& results() {
    static std::map<std::pair<int, int>, Result> r;
    return r;
}

void BM_IsaThroughput(benchmark::State& state) {
    const int ranks = static_cast<int>(state.range(0));
    const int steps = static_cast<int>(state.range(1));
    const Profile& prof = profile();
    const int blocks = prof.chip.aic_cores;
    std::int64_t total_instr = 0;
    double cpu_s = 0;
    double wall_s = 0;
    std::int64_t per_iter = 0;
    for (auto _ : state) {
        state.PauseTiming();
        auto rt = std::make_unique<Runtime>(prof, ClusterOptions{ranks, DataMode::TimingOnly, false});
        std::vector<const GmAllocation*> a(ranks), b(ranks), c(ranks);
        for (int r = 0; r < ranks; ++r) {
            a[r] = &rt->host(r).malloc("A", std::int64_t{kM} * kKt * steps * 2);
            b[r] = &rt->host(r).malloc("B", std::int64_t{kKt} * steps * kN * 2);
            c[r] = &rt->host(r).malloc("C", std::int64_t{blocks} * kM * kN * 4);
        }
        std::vector<std::int64_t> instr(static_cast<std::size_t>(ranks), 0);
        state.ResumeTiming();
        const double cpu0 = bench::cpu_now();
        const double wall0 = bench::wall_now();
        rt->run_hosts([&](HostContext& host) {
            const int r = host.rank();
            Stream& s = host.create_stream("compute");
            s.launch(KernelLaunch{"toy_gemm", CoreType::AIC, blocks, [&, r](BlockCtx& blk) {
                                      return toy_gemm_block(blk, *a[r], *b[r], *c[r], steps);
                                  }});
            s.synchronize();
            for (const KernelStats& k : s.kernel_stats()) instr[static_cast<std::size_t>(r)] += k.instructions;
        });
        cpu_s += bench::cpu_now() - cpu0;
        wall_s += bench::wall_now() - wall0;
        state.PauseTiming();
        per_iter = 0;
        for (std::int64_t n : instr) per_iter += n;
        total_instr += per_iter;
        rt.reset();  // joins the stream threads outside the timed region
        state.ResumeTiming();
    }
    state.counters["instr"] = benchmark::Counter(static_cast<double>(per_iter));
    state.counters["instr/s"] = benchmark::Counter(static_cast<double>(total_instr), benchmark::Counter::kIsRate);
    state.counters["instr/core-s"] = benchmark::Counter(cpu_s > 0 ? static_cast<double>(total_instr) / cpu_s : 0);
    state.counters["host_threads"] = benchmark::Counter(2.0 * ranks);
    Result& res = results()[{ranks, steps}];
    res.instr = static_cast<double>(per_iter);
    res.instr_per_core_s = cpu_s > 0 ? static_cast<double>(total_instr) / cpu_s : 0;
    res.instr_per_s = wall_s > 0 ? static_cast<double>(total_instr) / wall_s : 0;
}

BENCHMARK(BM_IsaThroughput)
    ->ArgNames({"ranks", "ksteps"})
    ->Args({2, 64})
    ->Args({4, 64})
    ->Args({8, 32})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    for (const auto& [key, r] : results()) {
        std::printf("isa_throughput: %d ranks x 24 AIC blocks x %d k-steps, timing-only: %.0f instructions/run, "
                    "%.2f M simulated instructions per host second, %.2f M per host core-second (%d host cores)\n",
                    key.first, key.second, r.instr, r.instr_per_s / 1e6, r.instr_per_core_s / 1e6,
                    host_core_count());
    }
    return 0;
}
