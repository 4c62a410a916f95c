// A new op is a kernel folder plus one registration, nothing else: a toy op written here (a
// column-parallel GEMM with no collective: every rank holds A and its column block of B and
// computes its column block of C) is its device code and its OpDesc, defaults refined as the
// shipped ops' are. With nothing written for it anywhere else it
//   * registers (an OpRegistry with it, as kernels/registry.cpp lists the shipped ops: found by
//     name, its knobs offered, a second op of its name refused);
//   * passes the conformance checks every registered op passes (tests/support/op_conformance.hpp: it
//     verifies with the sanitizer clean on 2, 4 and 8 ranks on shapes that are not whole tiles,
//     timing-only gives its times, its fault is caught);
//   * runs through the command line's path (parse_command_line, the ops facade, run_program), a
//     sweep (host/batch/sweep_plan.hpp, sweep_runner.hpp) and the API (ctx.ops().add, then run),
//     with the same times.
// The op is not in the shipped registry (it would show in --list-ops), so the host is handed it
// in the config (RunRequest::op_desc), as the API hands it a user's op.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <vector>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "host/batch/sweep_plan.hpp"
#include "host/batch/sweep_runner.hpp"
#include "kernels/common/fused_gemm_defaults.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/registry.hpp"
#include "tandem/tandem.hpp"
#include "tests/support/op_conformance.hpp"

namespace tandem::test {
namespace toy_op_test {

using namespace kernels;

// The toy op's device code: the shared GEMM, optionally stopping one K panel short.
Task toy_gemm(BlockCtx& blk, GemmGrid g, GmTensor c, bool skip_last_panel) {
    GemmTilePipeline pipe(blk, g.base_m, g.base_n, g.a.dtype());
    for (int t : data_parallel_tiles(g, blk.block_idx(), blk.block_num())) {
        co_await compute_tile(pipe, g, t, 0, skip_last_panel ? g.k_panels - 1 : g.k_panels);
        co_await pipe.store(g.c_tile(c, t));
    }
    pipe.drain();
}

// Its one kernel is the whole op: every view times it.
class ToyRun final : public OpInstance {
public:
    explicit ToyRun(const OpParams& p) : p_(p), tensors_(static_cast<std::size_t>(p.ranks)) {}
    std::vector<std::string> streams() const override { return {"compute"}; }
    void allocate_workspace(int, GlobalMemory&) override {}
    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }
    ViewPlan view(ViewKind kind, int rank) const override {
        const RankTensors& t = tensors_[static_cast<std::size_t>(rank)];
        const GemmGrid g(t.a, t.b, p_.base_m, p_.base_n);
        const bool skip = p_.fault == "skip_last_k_panel";
        KernelLaunch k{"ToyGemm", CoreType::AIC, p_.compute_blocks,
                       [g, c = t.out, skip](BlockCtx& blk) { return toy_gemm(blk, g, c, skip); }};
        ViewPlan plan = launched_together({}, {{0, k}});
        if (kind != ViewKind::Pipelined) plan.phases.front().role = PhaseRole::Compute;
        return plan;
    }

private:
    OpParams p_;
    std::vector<RankTensors> tensors_;
};

// What kernels/toy_column_gemm/op.cpp would hold.
const OpDesc& toy_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "toy_column_gemm";
        d.title = "Toy column GEMM";
        d.doc = "A replicated, B and C split by columns, no collective";
        d.sharding = Sharding{Split::Replicated, Split::Cols, false, Split::Cols};
        d.comm_kind = kNoComm;
        d.comm_payload_bytes = [](const OpParams&) { return 0.0; };
        // Each rank's column block 130 wide: neither N nor the block is whole tiles (padded).
        d.test_shape = [](int ranks) { return RunShape{ranks, 200, 300, 130 * ranks, 128, 256, 4, std::nullopt}; };
        d.bench_shape = RunShape{2, 1024, 1024, 1024};
        d.scale_shape = RunShape{64, 1024, 1024, 64 * 256};
        VariantDesc defaults = fused_gemm_defaults();
        defaults.takes_bias = false;
        defaults.default_comm_blocks = [](const BufferLimits&) { return 0; };  // no comm kernel
        VariantDesc v = derive_variant(defaults, "local", "each rank's column block of C, on its own");
        v.faults = {"skip_last_k_panel"};
        v.validate = [](const OpParams& p, const BufferLimits& lim) {
            check_gemm_tile(p, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
            check_out_dtype_fp32_or_input(p);
            check_multiple(kParamN, p.n, p.ranks, "ranks", "each rank holds a column block of B");
        };
        v.workspace_bytes = [](const OpParams&) { return 0.0; };
        v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<ToyRun>(p); };
        d.min_ranks = 1;
        d.variants = {v};
        return d;
    }();
    return op;
}

const OpDesc& toy() { return toy_op(); }
const VariantDesc& local() { return toy_op().variants.front(); }

TEST(ToyOp, RegistersWithOneLine) {
    std::vector<const OpDesc*> ops = registered_ops();
    ops.push_back(&toy());  // the one line
    const OpRegistry registry(ops);
    EXPECT_EQ(&registry.find("toy_column_gemm"), &toy());
    EXPECT_EQ(registry.ops().size(), registered_ops().size() + 1);
    EXPECT_EQ(registry.knobs().size(), all_knobs().size());  // it declares none
    ops.push_back(&toy());
    try {
        OpRegistry twice(ops);
        ADD_FAILURE() << "a second op named toy_column_gemm was accepted";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("two ops are named toy_column_gemm"), std::string::npos) << e.what();
    }
}

TEST(ToyOp, PassesTheConformanceChecksOfEveryRegisteredOp) {
    const Profile p = b1_profile();
    check_description(toy(), local());
    check_declared_runs(toy(), local(), p);
    check_timing_only(toy(), local(), p);
    check_faults(toy(), local(), p);
}

TEST(ToyOp, RunsThroughTheCommandLinesPath) {
    const char* argv[] = {"tandem", "--op", "toy_column_gemm", "-n", "4", "--gm", "130", "--gk", "260", "--gn", "280",
                          "--compute-blocks", "4", "--bias", "none"};
    host::RunRequest cfg = host::parse_command_line(static_cast<int>(std::size(argv)), argv).run;
    cfg.op_desc = &toy();  // what the registry would resolve the name to
    const host::ProgramOutput out = run_validated(cfg, b1_profile());
    EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
    EXPECT_EQ(out.results.id.run.variant, "local");
}

TEST(ToyOp, RunsInASweep) {
    host::RunRequest defaults;
    defaults.op = toy().name;
    defaults.op_desc = &toy();
    defaults.compute_blocks = 4;
    host::ProfileCache profiles;
    const host::SweepPlan plan = host::plan_sweep_text(
        "ranks,m,k,n,timing_only\n2,200,300,400,false\n4,130,260,280,false\n", "toy.csv", defaults, profiles);
    ASSERT_TRUE(plan.bad.empty()) << plan.bad.front().message;
    host::SweepOptions opt;
    opt.jobs = 1;
    host::SweepRunner runner(opt);
    runner.run(plan.jobs);
    const std::vector<host::SweepEntry> entries = runner.entries();
    ASSERT_EQ(entries.size(), 2u);
    for (const host::SweepEntry& e : entries) {
        EXPECT_EQ(e.status, host::SweepStatus::Ok) << e.error;
        EXPECT_EQ(e.results.verification, host::Verification::Passed);
        EXPECT_EQ(e.results.id.run.op, "toy_column_gemm");
    }
}

TEST(ToyOp, RunsThroughTheApiWithTheCommandLinesTimes) {
    api::ContextOptions o;
    o.ranks = 2;
    api::Context ctx(o);
    // The API keeps the ops it is given; this one lives as long as the program.
    ctx.ops().add(std::shared_ptr<const OpDesc>(&toy(), [](const OpDesc*) {}));
    const int m = 200, k = 300, cols = 130;
    const std::vector<std::vector<float>> ones(2, std::vector<float>(static_cast<std::size_t>(m) * k, 1.0f));
    const std::vector<std::vector<float>> twos(2, std::vector<float>(static_cast<std::size_t>(k) * cols, 2.0f));
    api::Tensor a = ctx.from_host(m, k, api::DataType::F16, ones);
    api::Tensor b = ctx.from_host(k, cols, api::DataType::F16, twos);
    api::Tensor c = ctx.zeros(m, cols, api::DataType::F32);
    const api::Workspace ws = ctx.ops().run(toy().name, c, a, b);
    for (int r = 0; r < 2; ++r)
        for (float x : c.to_host(r)) ASSERT_EQ(x, 2.0f * k) << "rank " << r;
    host::RunRequest cfg = conformance_config(toy(), local(), RunShape{2, m, k, 2 * cols});
    cfg.timing_only = true;
    EXPECT_DOUBLE_EQ(ws.results().pipelined_us, run_validated(cfg, b1_profile()).results.times.pipelined_us);
}

}  // namespace toy_op_test
}  // namespace tandem::test
