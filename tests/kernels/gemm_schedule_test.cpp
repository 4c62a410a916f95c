// The GEMM schedules as pure functions: every (tile, K panel) is computed exactly once, in
// segments a block computes in K order; stream-K balances the K iterations over the blocks
// (within one); hybrid keeps full waves whole; split tiles get consecutive partial slots in K
// order, and their last segment is the one that finishes the tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "kernels/common/gemm_schedule.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {
namespace gemm_schedule_test {

// Checks every invariant a kernel relies on; returns the largest number of blocks sharing a tile.
int check_schedule(const GemmSchedule& s) {
    std::vector<std::vector<int>> covered(static_cast<std::size_t>(s.tiles()),
                                          std::vector<int>(static_cast<std::size_t>(s.k_panels()), 0));
    std::set<int> slots;
    std::map<int, std::vector<int>> slots_of_tile;  // in K order
    std::map<int, int> finishers;
    int widest = 0;
    for (int b = 0; b < s.blocks(); ++b) {
        const auto& segs = s.segments(b);
        for (std::size_t i = 0; i < segs.size(); ++i) {
            const GemmSegment& g = segs[i];
            EXPECT_GE(g.tile, 0);
            EXPECT_LT(g.tile, s.tiles());
            EXPECT_LT(g.k_begin, g.k_end) << "empty segment on block " << b;
            EXPECT_GE(g.k_begin, 0);
            EXPECT_LE(g.k_end, s.k_panels());
            for (int k = g.k_begin; k < g.k_end; ++k) ++covered[static_cast<std::size_t>(g.tile)][static_cast<std::size_t>(k)];
            const int slot = s.partial_slot(b, static_cast<int>(i));
            if (s.split(g.tile)) {
                EXPECT_GE(slot, 0);
                EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " used twice";
                slots_of_tile[g.tile].push_back(slot);
            } else {
                EXPECT_EQ(slot, -1);
                EXPECT_EQ(g.k_begin, 0);
                EXPECT_EQ(g.k_end, s.k_panels());
            }
            if (s.finishes_tile(b, static_cast<int>(i))) ++finishers[g.tile];
        }
    }
    for (int t = 0; t < s.tiles(); ++t) {
        for (int k = 0; k < s.k_panels(); ++k)
            EXPECT_EQ(covered[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)], 1) << "tile " << t << " panel " << k;
        EXPECT_EQ(finishers[t], 1) << "tile " << t;
        widest = std::max(widest, s.contributors(t));
        if (s.split(t)) {
            std::vector<int> expect(static_cast<std::size_t>(s.contributors(t)));
            for (int i = 0; i < s.contributors(t); ++i) expect[static_cast<std::size_t>(i)] = s.first_slot(t) + i;
            std::vector<int> got = slots_of_tile[t];
            std::sort(got.begin(), got.end());
            EXPECT_EQ(got, expect) << "tile " << t;
        }
    }
    EXPECT_EQ(static_cast<int>(slots.size()), s.partial_slots());
    EXPECT_EQ(gemm_partial_slots(s.kind(), s.tiles(), s.k_panels(), s.blocks()), s.partial_slots());
    return widest;
}

int block_iterations(const GemmSchedule& s, int b) {
    int n = 0;
    for (const GemmSegment& g : s.segments(b)) n += g.k_end - g.k_begin;
    return n;
}

TEST(GemmSchedule, DataParallelIsWholeTilesRoundRobin) {
    const GemmSchedule s(GemmScheduleKind::DataParallel, 25, 4, 24);
    EXPECT_EQ(check_schedule(s), 1);
    EXPECT_EQ(s.partial_slots(), 0);
    ASSERT_EQ(s.segments(0).size(), 2u);
    EXPECT_EQ(s.segments(0)[1], (GemmSegment{24, 0, 4}));
    EXPECT_EQ(s.segments(23).size(), 1u);
}

TEST(GemmSchedule, StreamKCoversEveryPanelOnceAndBalances) {
    for (int tiles : {25, 31, 47}) {
        for (int k_panels : {1, 2, 4, 7, 16}) {
            SCOPED_TRACE(testing::Message() << tiles << " tiles x " << k_panels << " panels");
            const GemmSchedule s(GemmScheduleKind::StreamK, tiles, k_panels, 24);
            check_schedule(s);
            int lo = 1 << 30, hi = 0;
            for (int b = 0; b < 24; ++b) {
                lo = std::min(lo, block_iterations(s, b));
                hi = std::max(hi, block_iterations(s, b));
            }
            EXPECT_LE(hi - lo, 1);
        }
    }
}

TEST(GemmSchedule, StreamKSplitsTilesAcrossTwoAndThreeBlocks) {
    // 25 tiles of 4 panels on 24 blocks: 100 iterations, 4 or 5 per block: tiles split in two.
    const GemmSchedule s25(GemmScheduleKind::StreamK, 25, 4, 24);
    EXPECT_EQ(check_schedule(s25), 2);
    EXPECT_GT(s25.partial_slots(), 0);
    // Block 0 takes [0, 4): tile 0 whole; block 1 [4, 8): tile 1 whole; ... block 4 [16, 20)
    EXPECT_EQ(s25.segments(0), (std::vector<GemmSegment>{{0, 0, 4}}));
    // Fewer tiles than blocks: each tile over three blocks (8 tiles x 6 panels on 24: 2 each).
    const GemmSchedule s8(GemmScheduleKind::StreamK, 8, 6, 24);
    EXPECT_EQ(check_schedule(s8), 3);
    EXPECT_EQ(s8.segments(1), (std::vector<GemmSegment>{{0, 2, 4}}));
    EXPECT_EQ(s8.contributors(0), 3);
    EXPECT_TRUE(s8.finishes_tile(2, 0));
    EXPECT_FALSE(s8.finishes_tile(0, 0));
}

TEST(GemmSchedule, HybridKeepsFullWavesWhole) {
    for (int tiles : {25, 31, 47}) {
        SCOPED_TRACE(testing::Message() << tiles << " tiles");
        const GemmSchedule s(GemmScheduleKind::Hybrid, tiles, 8, 24);
        const int widest = check_schedule(s);
        for (int t = 0; t < 24; ++t) EXPECT_FALSE(s.split(t)) << t;
        int split = 0;
        for (int t = 24; t < tiles; ++t) split += s.split(t) ? 1 : 0;
        EXPECT_GT(split, 0);
        EXPECT_GE(widest, 2);
    }
    // 47 tiles: 23 remainder tiles of 8 panels over 24 blocks (7 or 8 panels each): two blocks
    // a tile; 31: 7 tiles of 8 panels over 24 blocks (2 or 3 panels each): up to four.
    EXPECT_EQ(check_schedule(GemmSchedule(GemmScheduleKind::Hybrid, 47, 8, 24)), 2);
    EXPECT_EQ(check_schedule(GemmSchedule(GemmScheduleKind::Hybrid, 31, 8, 24)), 4);
    // 25: the one remainder tile of 3 panels over 24 blocks: three blocks of one panel.
    EXPECT_EQ(check_schedule(GemmSchedule(GemmScheduleKind::Hybrid, 25, 3, 24)), 3);
    // Evenly dividing: hybrid is data-parallel.
    const GemmSchedule even(GemmScheduleKind::Hybrid, 48, 8, 24);
    EXPECT_EQ(check_schedule(even), 1);
    EXPECT_EQ(even.partial_slots(), 0);
}

TEST(GemmSchedule, MoreBlocksThanIterationsLeavesBlocksIdle) {
    const GemmSchedule s(GemmScheduleKind::StreamK, 2, 3, 24);
    EXPECT_EQ(check_schedule(s), 3);
    int busy = 0;
    for (int b = 0; b < 24; ++b) busy += s.segments(b).empty() ? 0 : 1;
    EXPECT_EQ(busy, 6);
}

TEST(GemmSchedule, RefusesUnknownNamesAndEmptyGrids) {
    EXPECT_EQ(parse_gemm_schedule("stream_k"), GemmScheduleKind::StreamK);
    EXPECT_THROW(parse_gemm_schedule("streamk"), SimError);
    EXPECT_THROW(GemmSchedule(GemmScheduleKind::StreamK, 4, 0, 24), SimError);
    EXPECT_THROW(GemmSchedule(GemmScheduleKind::StreamK, 4, 4, 0), SimError);
}

}  // namespace gemm_schedule_test
}  // namespace tandem::kernels
