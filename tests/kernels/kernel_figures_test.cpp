// Kernel time and pipe utilisation (host/run/kernel_figures.hpp): per-core busy counts an
// instruction's [start, end) on its pipe and never the time it waited for a flag; SCALAR is one
// issue slot per instruction; a core that runs two blocks (waves) sums both; a second launch on
// the same stream counts only its own work. Then, for every op and variant, on every rank, every
// launch of every view: pipe_ratio in the results JSON, and busy <= kernel time on every pipe of
// every core (max ratio <= 1).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/run/kernel_figures.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "kernels/registry.hpp"
#include "sim/isa/isa.hpp"
#include "sim/machine/cluster.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace kernel_figures_test {

std::size_t at(Pipe p) { return static_cast<std::size_t>(pipe_index(p)); }

// A 64 KiB panel into L1, then an extract that must wait for it (MTE2 -> MTE1), then a cube
// step that waits for the extract: MTE1 and the cube sit idle while the load runs.
Task wait_then_work(BlockCtx& blk, GmTensor src) {
    Tile& panel = blk.alloc_tile(MemKind::L1, 128, 256, DType::F16, "panel");
    Tile& a = blk.alloc_tile(MemKind::L0A, 128, 64, DType::F16, "a");
    Tile& b = blk.alloc_tile(MemKind::L0B, 64, 256, DType::F16, "b");
    Tile& c = blk.alloc_tile(MemKind::L0C, 128, 256, DType::F32, "c");
    co_await TLOAD(panel, src);
    set_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
    wait_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
    TEXTRACT(a, panel, 0, 0);
    TEXTRACT(b, panel, 0, 0);
    set_flag(blk, PIPE_MTE1, PIPE_M, 0);
    wait_flag(blk, PIPE_MTE1, PIPE_M, 0);
    TMATMUL(c, a, b);
}

struct Launched {
    std::vector<KernelStats> stats;
    std::vector<InstrRecord> log;
    CostModel cost;
};

Launched launch_twice(int blocks) {
    const Profile p = test::b1_profile();
    Runtime rt(p, ClusterOptions{1, DataMode::TimingOnly, true, false});
    const GmTensor src(rt.cluster().chip(0).gm.allocate("src", 128 * 256 * 2), 0, 128, 256, 256, DType::F16);
    Launched out{{}, {}, rt.cluster().cost()};
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("s0");
        for (int i = 0; i < 2; ++i) {
            s.launch(KernelLaunch{"k", CoreType::AIC, blocks, [src](BlockCtx& blk) { return wait_then_work(blk, src); }});
            s.synchronize();
        }
        out.stats = s.kernel_stats();
    });
    out.log = rt.cluster().event_log();
    return out;
}

TEST(KernelFigures, BusyIsInstructionTimeNotWaiting) {
    const Launched run = launch_twice(1);
    ASSERT_EQ(run.stats.size(), 2u);
    const KernelStats& k = run.stats[0];
    ASSERT_EQ(k.cores.size(), 1u);
    const CoreBusy& core = k.cores[0];
    SimTime load = 0, extract = 0, cube = 0, extract_start = kNever, load_end = 0;
    for (const InstrRecord& r : run.log) {
        if (r.start >= run.stats[1].start) continue;  // the first launch only
        if (r.op == Opcode::TLOAD) load += r.end - r.start, load_end = r.end;
        if (r.op == Opcode::TEXTRACT) extract += r.end - r.start, extract_start = std::min(extract_start, r.start);
        if (r.op == Opcode::TMATMUL) cube += r.end - r.start;
    }
    ASSERT_GT(load, 0);
    EXPECT_GE(extract_start, load_end);  // MTE1 waited the whole load ...
    EXPECT_EQ(core.busy_ps[at(Pipe::MTE2)], load);
    EXPECT_EQ(core.busy_ps[at(Pipe::MTE1)], extract);  // ... which is not in its busy time
    EXPECT_EQ(core.busy_ps[at(Pipe::M)], cube);
    EXPECT_EQ(core.busy_ps[at(Pipe::FIX)], 0);
    EXPECT_EQ(core.busy_ps[at(Pipe::S)], 8 * run.cost.issue_ps);  // 8 instructions issued
    const KernelFigures f = measure_kernel(k);
    EXPECT_EQ(f.aic_cores, 1);
    EXPECT_EQ(f.aiv_cores, 0);
    EXPECT_DOUBLE_EQ(f.ratio(CoreType::AIC, Pipe::MTE1)->mean, double(extract) / double(k.end - k.start));
    EXPECT_EQ(f.ratio(CoreType::AIV, Pipe::MTE2), nullptr);
    // The second launch on the same stream and cores counts only its own work.
    ASSERT_EQ(run.stats[1].cores.size(), 1u);
    EXPECT_EQ(run.stats[1].cores[0].busy_ps, core.busy_ps);
}

TEST(KernelFigures, ACoreRunningTwoBlocksSumsThem) {
    const Launched run = launch_twice(25);  // 24 AIC cores: core 0 takes block 24 in a second wave
    const KernelStats& k = run.stats[0];
    ASSERT_EQ(k.cores.size(), 24u);
    EXPECT_EQ(k.cores[0].busy_ps[at(Pipe::M)], 2 * k.cores[1].busy_ps[at(Pipe::M)]);
    const KernelFigures f = measure_kernel(k);
    const PipeRatio& cube = *f.ratio(CoreType::AIC, Pipe::M);
    EXPECT_DOUBLE_EQ(cube.max, 2 * cube.min);
    EXPECT_DOUBLE_EQ(cube.mean, (cube.max + 23 * cube.min) / 24);
}

// The kernel's time is the task duration: the blocks' span with the task's start and end around
// it, and every pipe ratio is over that time; the blocks' own span stays as it was.
TEST(KernelFigures, TheTasksStartAndEndAreInTheKernelTimeAndTheRatios) {
    const Launched run = launch_twice(1);
    const KernelStats& k = run.stats[0];
    const TaskOverheads task{from_us(1.5), from_us(0.5)};
    const KernelFigures bare = measure_kernel(k);
    const KernelFigures f = measure_kernel(k, task);
    EXPECT_DOUBLE_EQ(bare.kernel_us(), bare.blocks_us());
    EXPECT_EQ(f.start, k.start);
    EXPECT_EQ(f.end, k.end);
    EXPECT_EQ(f.task_start, k.start - task.start_ps);
    EXPECT_EQ(f.task_end, k.end + task.end_ps);
    EXPECT_NEAR(f.kernel_us(), f.blocks_us() + 2.0, 1e-9);
    const double busy = double(k.cores[0].busy_ps[at(Pipe::MTE1)]);
    EXPECT_DOUBLE_EQ(f.ratio(CoreType::AIC, Pipe::MTE1)->mean, busy / double(f.task_end - f.task_start));
    EXPECT_LT(f.ratio(CoreType::AIC, Pipe::MTE1)->mean, bare.ratio(CoreType::AIC, Pipe::MTE1)->mean);
    // The shipped profile's task overheads are parts of the host's latencies.
    const Profile p = test::b1_profile();
    const TaskOverheads shipped = TaskOverheads::of(p);
    EXPECT_GT(shipped.start_ps, 0);
    EXPECT_LE(shipped.start_ps, from_us(p.host.launch_to_start_us));
    EXPECT_LE(shipped.end_ps, from_us(p.host.kernel_end_us));
}

// A small shape every op and variant takes on 2 ranks (M, N, K whole tiles per rank; N a
// multiple of gemm pto_performance's 1536).
RunRequest small_config(const std::string& op, const std::string& variant) {
    RunRequest c;
    c.op = op;
    c.variant = variant;
    c.ranks = 2;
    c.m = 1024;
    c.k = 512;
    c.n = 1536;
    c.timing_only = true;
    return c;
}

TEST(KernelFigures, EveryOpReportsPipeRatiosWithBusyWithinKernelTime) {
    const Profile p = test::b1_profile();
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        for (const kernels::VariantDesc& v : op->variants) {
            const std::string what = op->name + " " + v.name;
            RunRequest cfg = small_config(op->name, v.name);
            const ProgramOutput out = run_program(resolve_run(cfg, p), p);
            const nlohmann::json kernels = to_json(out.results).at("kernels");
            ASSERT_FALSE(kernels.empty()) << what;
            for (const nlohmann::json& k : kernels) {
                EXPECT_TRUE(k.contains("pipe_ratio")) << what;
                EXPECT_GT(k.at("kernel_us").get<double>(), 0.0) << what;
                EXPECT_EQ(k.at("per_rank").size(), 2u) << what;
            }
            for (const RankViewTimes& rank : out.bench.per_rank) {
                ASSERT_EQ(rank.kernels.size(), out.bench.per_rank[0].kernels.size()) << what;
                for (const KernelFigures& f : rank.kernels) {
                    EXPECT_GT(f.aic_cores + f.aiv_cores, 0) << what << " " << f.kernel;
                    EXPECT_EQ(f.pipe_ratio.size(), (f.aic_cores > 0 ? 5u : 0u) + (f.aiv_cores > 0 ? 4u : 0u)) << what;
                    for (const PipeRatio& r : f.pipe_ratio) {
                        EXPECT_GE(r.min, 0.0) << what << " " << f.kernel << " " << pipe_key(r.pipe);
                        EXPECT_LE(r.min, r.mean) << what << " " << f.kernel;
                        EXPECT_LE(r.mean, r.max) << what << " " << f.kernel;
                        EXPECT_LE(r.max, 1.0) << what << " " << f.kernel << " " << pipe_key(r.pipe);
                    }
                    // Every launch moves data: some core's MTE2 was busy.
                    const PipeRatio* mte2 = f.ratio(f.aic_cores > 0 ? CoreType::AIC : CoreType::AIV, Pipe::MTE2);
                    ASSERT_NE(mte2, nullptr) << what;
                    EXPECT_GT(mte2->max, 0.0) << what << " " << f.kernel;
                }
            }
        }
    }
}

}  // namespace kernel_figures_test
}  // namespace tandem::host
