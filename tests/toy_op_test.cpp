// Adding an op to the shared host takes its kernels and its description, nothing else: a toy op
// written here (a column-parallel GEMM with no collective: every rank holds A and its column
// block of B and computes its column block of C) runs through the host's inputs, golden, views
// and verification unchanged, on shapes that do not divide into tiles (the host pads them), and
// a sabotaged kernel fails verification. In the product an op also gets its one line in
// kernels/registry.cpp, which makes it reachable by --op, sweeps and the API.
#include <gtest/gtest.h>

#include "host/run/op_bench.hpp"
#include "host/run/op_inputs.hpp"
#include "host/cli/options.hpp"
#include "host/run/verify.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/op_checks.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

using namespace kernels;

// The toy op's device code: the shared GEMM, optionally stopping one K panel short.
Task toy_gemm(BlockCtx& blk, GemmGrid g, GmTensor c, bool skip_last_panel) {
    GemmTilePipeline pipe(blk, g.base_m, g.base_n);
    for (int t : data_parallel_tiles(g, blk.block_idx(), blk.block_num())) {
        co_await compute_tile(pipe, g, t, 0, skip_last_panel ? g.k_panels - 1 : g.k_panels);
        co_await pipe.store(g.c_tile(c, t));
    }
    pipe.drain();
}

class ToyRun final : public OpInstance {
public:
    explicit ToyRun(const OpParams& p) : p_(p), tensors_(static_cast<std::size_t>(p.ranks)) {}
    std::vector<std::string> streams() const override { return {"compute"}; }
    void allocate_workspace(int, GlobalMemory&) override {}
    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }
    ViewPlan view(ViewKind, int rank) const override {
        const RankTensors& t = tensors_[static_cast<std::size_t>(rank)];
        const GemmGrid g(t.a, t.b, p_.base_m, p_.base_n);
        const bool skip = p_.fault == "skip_last_k_panel";
        KernelLaunch k{"ToyGemm", CoreType::AIC, p_.compute_blocks,
                       [g, c = t.out, skip](BlockCtx& blk) { return toy_gemm(blk, g, c, skip); }};
        return ViewPlan{{}, {ViewPhase{PhaseRole::Compute, {}, {{0, k}}}}};
    }

private:
    OpParams p_;
    std::vector<RankTensors> tensors_;
};

const OpDesc& toy_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "toy_column_gemm";
        d.title = "Toy column GEMM";
        d.doc = "A replicated, B and C split by columns, no collective";
        d.sharding = Sharding{Split::Replicated, Split::Cols, false, Split::Cols};
        d.comm_kind = "none";
        d.comm_payload_bytes = [](const OpParams&) { return 0.0; };
        VariantDesc v;
        v.name = "local";
        v.faults = {"skip_last_k_panel"};
        v.validate = [](const OpParams& p, const BufferLimits& lim) {
            check_gemm_tile(p, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
            check_multiple("--gn", "N", p.n, p.ranks, "ranks", "each rank holds a column block of B");
        };
        v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, p.base_n}; };
        v.workspace_bytes = [](const OpParams&) { return 0.0; };
        v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<ToyRun>(p); };
        d.variants = {v};
        return d;
    }();
    return op;
}

// Runs the toy op functionally through the host's pieces; returns whether every rank verified.
bool run_toy(int ranks, int m, int k, int n, const std::string& fault = "") {
    const Profile profile = test::b1_profile();
    OpParams p;
    p.ranks = ranks;
    p.m = m;
    p.k = k;
    p.n = n;
    p.compute_blocks = profile.chip.aic_cores;
    p.comm_blocks = profile.chip.aiv_cores;
    p.variant = "local";
    p.fault = fault;
    const OpDesc& op = toy_op();
    const VariantDesc& v = op.variants.front();
    v.validate(p, buffer_limits_of(profile));
    const OpInputs inputs = make_op_inputs(op.sharding, p);
    const std::vector<float> golden = golden_output(op.sharding, p, inputs);
    const BenchOutcome out = run_op_views(profile, RunConfig{}, op, v, p, &inputs);
    EXPECT_GT(out.slowest.compute_only_us, 0.0);
    bool all = true;
    for (int r = 0; r < ranks; ++r) {
        const std::vector<float> expected = expected_for_rank(op.sharding, p, golden, r);
        all = verify_rank(r, out.out[static_cast<std::size_t>(r)].data(), expected).passed && all;
    }
    return all;
}

TEST(ToyOp, RunsThroughTheSharedHost) { EXPECT_TRUE(run_toy(2, 256, 512, 1024)); }

TEST(ToyOp, ShapesThatDoNotDivideIntoTilesArePadded) {
    EXPECT_TRUE(run_toy(2, 200, 300, 2 * 200));
    EXPECT_TRUE(run_toy(4, 130, 260, 4 * 70));
}

TEST(ToyOp, ASabotagedKernelFailsVerification) { EXPECT_FALSE(run_toy(2, 256, 512, 1024, "skip_last_k_panel")); }

}  // namespace
}  // namespace tandem::host
