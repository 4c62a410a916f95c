// matmul_all_reduce --variant ascend, the replica of Ascend's GEMM+AllReduce example, what is its
// own (tests/kernels/op_conformance_test.cpp checks what every op must do): its work split (the published
// arithmetic on the default shape), verification with few blocks (several tiles per block, comm
// blocks that only take part in the barrier and the all-gather), its default blocks, functional
// == timing-only times and byte-identical repeats, overlap on a larger shape, and the refusals
// of what the example does not do.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>
#include <string>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_all_reduce/ascend/ar_tiling.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace matmul_all_reduce_ascend_test {

using kernels::AgSegment;
using kernels::AscendArShape;
using kernels::AscendArTiling;

// The published default: 8 ranks, M 5416 -> 5504, N 1408 -> 1536, 24 + 24 blocks.
AscendArTiling default_tiling() { return AscendArTiling(AscendArShape{8, 5504, 6144, 1536, 128, 256, 24, 24}); }

TEST(MatmulAllReduceAscendTiling, ComputeSplitIsCeilDivisionWithAShortLastBlock) {
    const AscendArTiling t = default_tiling();
    EXPECT_EQ(t.m_tiles(), 43);
    EXPECT_EQ(t.n_tiles(), 6);
    EXPECT_EQ(t.tiles(), 258);
    EXPECT_EQ(t.tiles_per_block(), 11);
    for (int b = 0; b < 23; ++b) {
        EXPECT_EQ(t.block_first(b), 11 * b);
        EXPECT_EQ(t.block_count(b), 11);
    }
    EXPECT_EQ(t.block_count(23), 5);
    // Few tiles: ceil division leaves the last blocks empty rather than balancing.
    const AscendArTiling small(AscendArShape{2, 256, 256, 768, 128, 256, 4, 4});  // 6 tiles
    EXPECT_EQ(small.tiles_per_block(), 2);
    EXPECT_EQ(small.block_count(2), 2);
    EXPECT_EQ(small.block_count(3), 0);
}

TEST(MatmulAllReduceAscendTiling, SwizzleIsABoustrophedonCoveringEveryTileOnce) {
    const AscendArTiling t = default_tiling();
    EXPECT_EQ(t.position(5).ni, 5);
    EXPECT_EQ(t.position(6).mi, 1);
    EXPECT_EQ(t.position(6).ni, 5);  // odd rows run backwards: tile 6 shares tile 5's B columns
    EXPECT_EQ(t.position(11).ni, 0);
    EXPECT_EQ(t.position(12).ni, 0);
    std::set<int> seen;
    for (int l = 0; l < t.tiles(); ++l) seen.insert(t.grid_index(l));
    EXPECT_EQ(static_cast<int>(seen.size()), t.tiles());
    EXPECT_EQ(t.owner(13), 5);
    EXPECT_EQ(t.owned_count(0), 33);  // ceil(258 / 8)
    EXPECT_EQ(t.owned_count(7), 32);
}

TEST(MatmulAllReduceAscendTiling, AllGatherRowsAreSplitEvenlyAndCoverEveryDestinationOnce) {
    const AscendArTiling t = default_tiling();
    for (int rank : {0, 3, 7}) {
        const std::int64_t total = t.ag_total_rows(rank);
        EXPECT_EQ(total, std::int64_t{t.owned_count(rank)} * 7 * 128);
        EXPECT_EQ(t.ag_rows_per_block(rank), (total + 23) / 24);
        std::map<std::pair<int, int>, std::vector<int>> rows_of;  // (tile, dest) -> rows covered
        for (int b = 0; b < 24; ++b) {
            std::int64_t rows = 0;
            for (const AgSegment& s : t.ag_segments(rank, b)) {
                EXPECT_NE(s.dest, rank);
                EXPECT_EQ(t.owner(s.tile), rank);
                EXPECT_LE(s.row0 + s.rows, 128);  // a segment ends at its tile's row boundary
                for (int r = s.row0; r < s.row0 + s.rows; ++r) rows_of[{s.tile, s.dest}].push_back(r);
                rows += s.rows;
            }
            if (b < 23) {
                EXPECT_EQ(rows, t.ag_rows_per_block(rank)) << "rank " << rank << " block " << b;
            }
        }
        EXPECT_EQ(static_cast<int>(rows_of.size()), t.owned_count(rank) * 7);
        for (auto& [key, rows] : rows_of) {
            std::sort(rows.begin(), rows.end());
            ASSERT_EQ(rows.size(), 128u);
            EXPECT_EQ(rows.front(), 0);
            EXPECT_EQ(rows.back(), 127);
        }
    }
}

RunRequest config(int ranks, int m, int k, int n, bool timing_only = false) {
    RunRequest c;
    c.op = "matmul_all_reduce";
    c.variant = "ascend";
    c.ranks = ranks;
    c.m = m;
    c.k = k;
    c.n = n;
    c.timing_only = timing_only;
    return c;
}

ProgramOutput run(RunRequest cfg, const std::string& fault = "") {
    cfg.fault = fault;
    return test::run_op(cfg);
}

// The views' invariants, and the example's: the pipelined view no slower than the sequential one.
void expect_view_invariants(const ProgramOutput& out) {
    test::expect_view_invariants(out);
    EXPECT_LE(out.results.times.pipelined_us, compute_metrics(out.results.id, out.results.times).sequential_us);
}

struct Shape {
    int ranks, m, k, n;
    std::optional<int> compute_blocks;
    std::optional<int> comm_blocks;
};

class MatmulAllReduceAscendFunctional : public ::testing::TestWithParam<Shape> {};

TEST_P(MatmulAllReduceAscendFunctional, VerifiesAndKeepsViewInvariants) {
    const Shape s = GetParam();
    RunRequest cfg = config(s.ranks, s.m, s.k, s.n);
    cfg.compute_blocks = s.compute_blocks;
    cfg.comm_blocks = s.comm_blocks;
    const ProgramOutput out = run(cfg);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    expect_view_invariants(out);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulAllReduceAscendFunctional,
    ::testing::Values(// Few blocks: several tiles per block through the ping/pong UB tiles, and
                      // comm blocks beyond the compute blocks that only take part in the
                      // barrier and the all-gather.
                      Shape{4, 512, 256, 768, 3, 5}));

TEST(MatmulAllReduceAscend, DefaultBlocksAreOneAivPerAic) {
    const RunRequest cfg = with_defaults(config(2, 256, 256, 256, true), test::b1_profile());
    EXPECT_EQ(cfg.compute_blocks, 24);
    EXPECT_EQ(cfg.comm_blocks, 24);
}

TEST(MatmulAllReduceAscend, FunctionalAndTimingOnlyAgreeAndRepeat) {
    const ProgramOutput functional = run(config(4, 512, 512, 512));
    const ProgramOutput timing = run(config(4, 512, 512, 512, true));
    const ProgramOutput again = run(config(4, 512, 512, 512, true));
    EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us);
    EXPECT_EQ(functional.results.times.seq_comm_us, timing.results.times.seq_comm_us);
    EXPECT_EQ(functional.results.times.seq_compute_us, timing.results.times.seq_compute_us);
    EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us);
    EXPECT_EQ(to_json(timing.results).dump(), to_json(again.results).dump());
    EXPECT_EQ(timing.results.verification, Verification::Skipped);
}

TEST(MatmulAllReduceAscend, PipelinedHidesPartOfTheCommOnALargerShape) {
    const ProgramOutput out = run(config(4, 2048, 2048, 1536, true));
    const ViewTimes& t = out.results.times;
    const RunMetrics m = compute_metrics(out.results.id, t);
    EXPECT_LT(t.pipelined_us, m.sequential_us);
    EXPECT_GT(m.overlap_eff_pct, 10.0);
    expect_view_invariants(out);
}

// The host time of rank 0's pipelined view beyond its kernels' span on the device (first start
// to last end): launch, kernel end and the synchronizes.
double pipelined_host_overhead_us(const ProgramOutput& out) {
    const RankViewTimes& r0 = out.bench.per_rank.at(0);
    SimTime first = 0, last = 0;
    bool any = false;
    for (const KernelFigures& k : r0.kernels) {
        if (k.view != kernels::ViewKind::Pipelined) continue;
        first = any ? std::min(first, k.start) : k.start;
        last = any ? std::max(last, k.end) : k.end;
        any = true;
    }
    EXPECT_TRUE(any);
    return r0.pipelined_us - to_us(last - first);
}

// The older example's comm launcher synchronizes the comm stream inside (the newer version's
// description: "the old launcher synchronised the comm stream inside"), and its pipelined view then
// synchronizes both streams as the newer one does: two synchronizes more than the newer host, each
// `sync_us`. The other views are timed as before.
TEST(MatmulAllReduceAscend, PipelinedHostSynchronizesTheCommStreamInsideItsLauncher) {
    RunRequest older = config(4, 512, 512, 512, true);
    RunRequest newer = older;
    newer.variant = "ascend_subtile";
    const ProgramOutput a = run(older);
    const ProgramOutput b = run(newer);
    const double sync_us = test::b1_profile().host.sync_us;
    EXPECT_NEAR(pipelined_host_overhead_us(a) - pipelined_host_overhead_us(b), 2 * sync_us, 1e-6);
}

TEST(MatmulAllReduceAscend, RefusesWhatTheExampleDoesNotDo) {
    RunRequest k = config(2, 512, 320, 512);
    EXPECT_NE(test::refusal_of(k).find("--gk 320"), std::string::npos) << test::refusal_of(k);
    RunRequest blocks = config(2, 512, 512, 512);
    blocks.compute_blocks = 8;
    blocks.comm_blocks = 4;
    EXPECT_NE(test::refusal_of(blocks).find("--comm-blocks 4"), std::string::npos) << test::refusal_of(blocks);
    RunRequest too_many = config(2, 512, 512, 512);
    too_many.comm_blocks = 49;
    EXPECT_NE(test::refusal_of(too_many).find("--comm-blocks 49"), std::string::npos) << test::refusal_of(too_many);
    RunRequest bias = config(2, 512, 512, 512);
    bias.bias = kernels::BiasKind::N;
    EXPECT_FALSE(test::refusal_of(bias).empty());
    RunRequest fp32 = config(2, 512, 512, 512);
    fp32.out_dtype = DType::F32;
    EXPECT_FALSE(test::refusal_of(fp32).empty());
    EXPECT_EQ(test::refusal_of(config(2, 512, 512, 512)), "");
}

}  // namespace matmul_all_reduce_ascend_test
}  // namespace tandem::host
