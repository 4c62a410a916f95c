// matmul_all_gather (GEMM + all-gather of C), what is its own (tests/kernels/op_conformance_test.cpp
// checks what every op must do): the payload it reports; the sequential baseline runs the ring
// all-gather on a ring profile; the spread push (the last round of tiles split over the push
// blocks) verifies and beats the baseline where a row block has few tiles; the pushes are held
// by the links and their busiest blocks; an M that does not split into whole tiles per rank is
// refused with the rule.
#include <gtest/gtest.h>

#include <string>

#include "host/cli/options.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "sim/core/cost_model.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace matmul_all_gather_test {

struct Case {
    std::string variant;
    int ranks, m, k, n;
    std::string dtype = "fp16";
    std::string out_dtype = "fp32";
    std::string bias = "none";
};

RunRequest config_of(const Case& c) {
    RunRequest cfg;
    cfg.op = "matmul_all_gather";
    cfg.variant = c.variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.dtype = parse_dtype_text(c.dtype);
    cfg.out_dtype = parse_dtype_text(c.out_dtype);
    cfg.bias = parse_bias_text(c.bias);
    // Small blocks keep the tests fast.
    cfg.compute_blocks = 4;
    cfg.comm_blocks = 4;
    return cfg;
}

TEST(MatmulAllGather, ReportsTheAllGatherPayload) {
    const ProgramOutput out = test::run_op(config_of(Case{"fused", 4, 512, 256, 512}));
    // (W-1)/W x M x N x 4 bytes (fp32 out) per rank.
    EXPECT_DOUBLE_EQ(out.results.id.comm_payload_bytes, 3.0 / 4.0 * 512 * 512 * 4);
}

TEST(MatmulAllGather, VerifiesOnARingProfile) {
    // A double ring: the sequential baseline is the ring all-gather; the fused push stores straight
    // into every peer (messages cross the ring's hops).
    const Profile p = test::double_ring_profile();
    RunRequest cfg = config_of(Case{"fused", 4, 512, 256, 512, "fp16", "fp32", "n"});
    const ProgramOutput out = test::run_op(cfg, p);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    test::expect_view_invariants(out);
}

TEST(MatmulAllGather, FusedBeatsTheBaselineWhenARowBlockHasFewerTilesThanPushBlocks) {
    // 8 ranks, M/W = 128: one row of 16 tiles per rank for 48 push blocks. The blocks split each
    // tile's peers (the spread push's last round); one block per tile sending to all 7 peers was
    // slower than the GEMM + all-gather baseline here (305 vs 231 us).
    RunRequest cfg = config_of(Case{"fused", 8, 1024, 1024, 4096});
    cfg.compute_blocks.reset();  // the profile's defaults: 24 AIC, 48 AIV
    cfg.comm_blocks.reset();
    cfg.timing_only = true;
    const ProgramOutput out = test::run_op(cfg);
    const RunMetrics m = compute_metrics(out.results.id, out.results.times);
    EXPECT_LT(out.results.times.pipelined_us, m.sequential_us);
}

TEST(MatmulAllGather, VerifiesWhenTheLastRoundOfTilesIsSplitOverThePushBlocks) {
    // The spread push: a full round of tiles (one per push block, to every peer, in rotated peer
    // orders), then the last round's tiles each split over several blocks by peers.
    //   4 ranks, 4 push blocks, 2 x 3 tiles per rank: 4 + 2 tiles, 2 blocks per last tile;
    //   8 ranks, 3 push blocks, 1 x 5 tiles (N = 1100 padded): 3 + 2 tiles, 1 block each;
    //   2 ranks, 4 push blocks, 2 x 3 tiles: 4 + 2, one peer so one block per tile.
    struct Split {
        Case c;
        int comm_blocks;
    };
    for (const Split& sc : {Split{Case{"fused", 4, 1024, 512, 768, "fp16", "fp32", "m"}, 4},
                            Split{Case{"fused", 8, 1024, 256, 1100, "bf16", "bf16", "n"}, 3},
                            Split{Case{"fused", 2, 512, 300, 768}, 4}}) {
        RunRequest cfg = config_of(sc.c);
        cfg.comm_blocks = sc.comm_blocks;
        const ProgramOutput out = test::run_op(cfg);
        EXPECT_EQ(out.results.verification, Verification::Passed)
            << sc.c.ranks << " ranks, " << sc.comm_blocks << " push blocks\n" << out.failure_report;
        test::expect_view_invariants(out);
    }
}

TEST(MatmulAllGather, FusedPushesAreHeldByTheLinksAndTheirBusiestBlocks) {
    // 8 ranks, 4096 x 1024 x 4096: 64 tiles of 128 x 256 fp32 (128 KiB) per rank for 48 push
    // blocks, each tile pushed to 7 peers. The GEMM takes ~40 us; then the pushes: 48 tiles at
    // once, 42 MiB over 7 links (6 MiB each at the link's rate), and the 16 blocks holding a
    // second tile push it to 7 peers one after another at a block's store rate. No schedule beats
    // all 56 MiB over the 7 links at their rate after the GEMM; the second tiles pushed only after
    // the whole first wave is the slowest one (where a block finishes its first tile early, its
    // second overlaps the others' first: which blocks do depends on the order they book the links).
    // The HCCL-style baseline spreads every rank's bytes evenly over its blocks and runs at the
    // links' rate throughout, so with the calibrated links and block rate (sim/MODEL.md) it is the
    // faster.
    RunRequest cfg = config_of(Case{"fused", 8, 4096, 1024, 4096});
    cfg.compute_blocks.reset();  // the profile's defaults: 24 AIC, 48 AIV
    cfg.comm_blocks.reset();
    cfg.timing_only = true;
    const ProgramOutput out = test::run_op(cfg);
    const Profile p = test::b1_profile();
    const double tile_bytes = 128.0 * 256 * 4;
    const double link_bytes_per_us = p.interconnect.link_gb_s * 1e3;
    const double all_over_links_us = 64 * 7 * tile_bytes / 7 / link_bytes_per_us;
    const double first_wave_us = 48 * 7 * tile_bytes / 7 / link_bytes_per_us;
    // A tile's 128 rows are 128 bursts into the peer's wider C (sim/MODEL.md "One core's remote traffic").
    const double block_rate = static_cast<double>(CostModel(p).remote_store_rate_bps(static_cast<std::int64_t>(tile_bytes), 128));
    const double tail_us = 7 * tile_bytes / block_rate * 1e6;
    const double compute_us = out.results.times.compute_only_us;
    EXPECT_GT(out.results.times.pipelined_us, compute_us + all_over_links_us);
    EXPECT_LT(out.results.times.pipelined_us, (compute_us + first_wave_us + tail_us) * 1.25);
    EXPECT_GT(out.results.times.pipelined_us, out.results.times.seq_comm_us);
}

TEST(MatmulAllGather, RefusesAnMThatDoesNotSplitIntoWholeTilesPerRank) {
    const std::string msg = test::refusal_of(config_of(Case{"fused", 4, 1000, 256, 256}));
    ASSERT_FALSE(msg.empty()) << "M = 1000 on 4 ranks accepted";
    EXPECT_NE(msg.find("--gm 1000"), std::string::npos) << msg;
    EXPECT_NE(msg.find("n*base-m"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1024"), std::string::npos) << msg;
}

}  // namespace matmul_all_gather_test
}  // namespace tandem::host
