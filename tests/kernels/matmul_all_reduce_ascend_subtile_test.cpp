// matmul_all_reduce --variant ascend_subtile, the replica of the newer version of Ascend's
// GEMM+AllReduce example: its arithmetic (balanced split, queue binding, owner-local subtile ids,
// the reversed AG stripe, the rotated first peer, the signal layout), functional verification on
// 2, 4 and 8 ranks (unequal block counts, fewer comm than compute blocks, other subtile sizes),
// what the kernels do as the pipelined view's event log shows it (bytes, units, the pending
// tail, the AG peers), the race fault's report, the sanitizer, functional == timing-only times, and the
// refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/signal_layout.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_tiling.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace matmul_all_reduce_ascend_subtile_test {

using kernels::AscendArShape;
using kernels::SubtileArTiling;
using kernels::SubtileSignalLayout;

// The published default: 8 ranks, M 5416 -> 5504, N 1408 -> 1536, 24 + 24 blocks, 64-row subtiles.
SubtileArTiling default_tiling() { return SubtileArTiling(AscendArShape{8, 5504, 6144, 1536, 128, 256, 24, 24}, 64); }

TEST(MatmulAllReduceAscendSubtileTiling, ComputeSplitIsBalanced) {
    const SubtileArTiling t = default_tiling();
    EXPECT_EQ(t.tiles(), 258);
    EXPECT_EQ(t.subtiles_per_tile(), 2);
    for (int b = 0; b < 18; ++b) {
        EXPECT_EQ(t.block_first(b), 11 * b);
        EXPECT_EQ(t.block_count(b), 11);
    }
    for (int b = 18; b < 24; ++b) {
        EXPECT_EQ(t.block_first(b), 198 + 10 * (b - 18));
        EXPECT_EQ(t.block_count(b), 10);
    }
    EXPECT_EQ(t.block_first(23) + t.block_count(23), 258);
    EXPECT_EQ(t.queue_capacity(), 11);  // ceil(258 / 24), as the older split
    // Fewer tiles than blocks: one each for the first, none for the rest.
    const SubtileArTiling few(AscendArShape{2, 256, 256, 768, 128, 256, 5, 5}, 64);  // 6 tiles
    EXPECT_EQ(few.block_count(0), 2);
    EXPECT_EQ(few.block_count(1), 1);
    EXPECT_EQ(few.block_first(4), 5);
    const SubtileArTiling tiny(AscendArShape{2, 384, 256, 256, 128, 256, 5, 5}, 64);  // 3 tiles
    EXPECT_EQ(tiny.block_count(2), 1);
    EXPECT_EQ(tiny.block_count(3), 0);
    EXPECT_EQ(tiny.queue_capacity(), 1);
}

// The queues carry the row-major id of each tile's swizzled place, which owner and local ids
// follow: linear tile 6 is the first of row 1, which runs backwards, so it sits at column 5.
TEST(MatmulAllReduceAscendSubtileTiling, TileIdIsTheRowMajorIdOfTheSwizzledPlace) {
    const SubtileArTiling t = default_tiling();
    EXPECT_EQ(t.tile_id(5), 5);
    EXPECT_EQ(t.tile_id(6), 11);
    EXPECT_EQ(t.tile_id(11), 6);
    EXPECT_EQ(t.tile_id(12), 12);
    EXPECT_EQ(t.owner(t.tile_id(6)), 3);  // 11 % 8, where the linear index would give 6
    EXPECT_EQ(t.tile_row(11), 1);
    EXPECT_EQ(t.tile_col(11), 5);
    std::set<int> ids;
    for (int l = 0; l < t.tiles(); ++l) ids.insert(t.tile_id(l));
    EXPECT_EQ(static_cast<int>(ids.size()), t.tiles());
    EXPECT_EQ(*ids.rbegin(), t.tiles() - 1);
}

TEST(MatmulAllReduceAscendSubtileTiling, CommBlockDrainsEveryBcThQueue) {
    const SubtileArTiling t = default_tiling();
    for (int b = 0; b < 24; ++b) {
        EXPECT_EQ(t.queues_of(b), std::vector<int>{b});
        EXPECT_EQ(t.expected_tiles(b), t.block_count(b));
    }
    const SubtileArTiling narrow(AscendArShape{4, 1280, 256, 768, 128, 256, 7, 3}, 64);  // 30 tiles: 5,5,4,4,4,4,4
    EXPECT_EQ(narrow.queues_of(0), (std::vector<int>{0, 3, 6}));
    EXPECT_EQ(narrow.queues_of(1), (std::vector<int>{1, 4}));
    EXPECT_EQ(narrow.queues_of(2), (std::vector<int>{2, 5}));
    EXPECT_EQ(narrow.expected_tiles(0), 5 + 4 + 4);
    EXPECT_EQ(narrow.expected_tiles(1), 5 + 4);
    const SubtileArTiling wide(AscendArShape{2, 640, 256, 512, 128, 256, 3, 5}, 64);
    EXPECT_TRUE(wide.queues_of(4).empty());
    EXPECT_EQ(wide.expected_tiles(4), 0);
}

TEST(MatmulAllReduceAscendSubtileTiling, OwnerLocalIdsInvertAndTheAgStripeIsReversed) {
    const SubtileArTiling t = default_tiling();
    EXPECT_EQ(t.owned_subtiles(0), 66);
    EXPECT_EQ(t.owned_subtiles(1), 66);
    EXPECT_EQ(t.owned_subtiles(2), 64);
    EXPECT_EQ(t.local_id(13, 1), 3);  // tile 13 -> rank 5, its second tile, stripe 1
    for (int rank = 0; rank < 8; ++rank) {
        std::vector<int> owner_of(static_cast<std::size_t>(t.owned_subtiles(rank)), -1);
        for (int b = 0; b < 24; ++b) {
            for (int l : t.ag_assigned(rank, b)) {
                EXPECT_EQ(owner_of[static_cast<std::size_t>(l)], -1);
                owner_of[static_cast<std::size_t>(l)] = b;
                EXPECT_EQ(t.summary_block(l), b) << "block " << b << " listens on the counter its subtiles bump";
            }
            const std::size_t expected = rank < 2 ? (b < 6 ? 2u : 3u) : (b < 8 ? 2u : 3u);
            EXPECT_EQ(t.ag_assigned(rank, b).size(), expected) << "rank " << rank << " block " << b;
        }
        for (int l = 0; l < t.owned_subtiles(rank); ++l) {
            EXPECT_GE(owner_of[static_cast<std::size_t>(l)], 0) << "rank " << rank << " subtile " << l;
            const int tile = t.tile_of_local(rank, l);
            EXPECT_EQ(t.owner(tile), rank);
            EXPECT_EQ(t.local_id(tile, t.stripe_of_local(l)), l);
        }
    }
    EXPECT_EQ(t.ag_assigned(0, 23), (std::vector<int>{0, 24, 48}));
    EXPECT_EQ(t.ag_assigned(0, 22), (std::vector<int>{1, 25, 49}));
}

TEST(MatmulAllReduceAscendSubtileTiling, SendRoundsStartAtARotatedPeerAndSkipSelf) {
    const SubtileArTiling t = default_tiling();
    EXPECT_EQ(t.ag_peer(0, 0, 0), 1);
    EXPECT_EQ(t.ag_peer(0, 3, 0), 4);
    EXPECT_EQ(t.ag_peer(6, 3, 0), 2);   // (6 + 1 + 3) % 8
    EXPECT_EQ(t.ag_peer(6, 3, 6), 1);   // wraps past 7, skipping 6
    for (int rank = 0; rank < 8; ++rank) {
        for (int l = 0; l < 20; ++l) {
            EXPECT_EQ(t.ag_peer(rank, l, 0), (rank + 1 + l % 7) % 8);
            std::set<int> peers;
            for (int p = 0; p < 7; ++p) peers.insert(t.ag_peer(rank, l, p));
            EXPECT_EQ(peers.size(), 7u);
            EXPECT_EQ(peers.count(rank), 0u);
        }
    }
    EXPECT_THROW(t.ag_peer(0, 0, 7), SimError);
}

TEST(MatmulAllReduceAscendSubtileTiling, SignalMatrixLayout) {
    const SubtileArTiling t = default_tiling();
    const SubtileSignalLayout s(t.tiles(), t.subtiles_per_tile(), 24);
    EXPECT_EQ(s.subtile_ready_slot(0), 10);
    EXPECT_EQ(s.subtile_ready_slot(515), 525);
    EXPECT_EQ(s.summary_slot(0), 526);
    EXPECT_EQ(4 * s.summary_slot(0), 2104);
    EXPECT_EQ(s.summary_slot(23), 526 + 16 * 23);
    EXPECT_EQ(s.slots(), 910);
    EXPECT_EQ(s.bytes(), 3648);
    EXPECT_EQ(s.name_of(4 * 3), "legacy_barrier[3]");
    EXPECT_EQ(s.name_of(4 * 15), "subtile_ready[5]");
    EXPECT_EQ(s.name_of(4 * (526 + 16 * 2)), "ag_summary[2]");
    EXPECT_EQ(s.name_of(4 * (527 + 16 * 2)), "");  // the rest of a summary line is unused
}

RunRequest config(int ranks, int m, int k, int n, bool timing_only = false) {
    RunRequest c;
    c.op = "matmul_all_reduce";
    c.variant = "ascend_subtile";
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
    std::optional<int> sub_m;
};

RunRequest config_of(const Shape& s, bool timing_only = false) {
    RunRequest cfg = config(s.ranks, s.m, s.k, s.n, timing_only);
    cfg.compute_blocks = s.compute_blocks;
    cfg.comm_blocks = s.comm_blocks;
    if (s.sub_m) cfg.knobs["comm_sub_m"] = *s.sub_m;
    return cfg;
}

class MatmulAllReduceAscendSubtileFunctional : public ::testing::TestWithParam<Shape> {};

TEST_P(MatmulAllReduceAscendSubtileFunctional, VerifiesAndKeepsViewInvariants) {
    const ProgramOutput out = run(config_of(GetParam()));
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    expect_view_invariants(out);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulAllReduceAscendSubtileFunctional,
    ::testing::Values(// 4 tiles on 8 ranks: half the ranks own nothing and only reduce-scatter.
                      Shape{8, 130, 256, 260, std::nullopt, std::nullopt, std::nullopt},
                      // 30 tiles over 7 compute blocks (5, 5, 4, 4, 4, 4, 4) drained by 3 comm
                      // blocks (queues {0, 3, 6}, {1, 4}, {2, 5}).
                      Shape{4, 1280, 256, 768, 7, 3, std::nullopt},
                      // 32 tiles on 8 ranks, 5 compute blocks (7, 7, 6, 6, 6), 4 comm blocks.
                      Shape{8, 1024, 256, 1024, 5, 4, std::nullopt},
                      // More comm than compute blocks: blocks 3 and 4 only all-gather.
                      Shape{2, 640, 256, 512, 3, 5, std::nullopt},
                      // Four stripes per tile.
                      Shape{2, 512, 256, 512, 3, 2, 32}));

// One stripe per tile: 64-row tiles (base-m 64) sent whole.
TEST(MatmulAllReduceAscendSubtile, OneStripePerTileVerifies) {
    RunRequest cfg = config(4, 512, 256, 512);
    cfg.base_m = 64;
    cfg.compute_blocks = 3;
    cfg.comm_blocks = 3;
    const ProgramOutput out = run(cfg);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    expect_view_invariants(out);
}

TEST(MatmulAllReduceAscendSubtile, DefaultBlocksAreOneAivPerAicAndSubtilesHalfATile) {
    const RunRequest cfg = with_defaults(config(2, 256, 256, 256, true), test::b1_profile());
    EXPECT_EQ(cfg.compute_blocks, 24);
    EXPECT_EQ(cfg.comm_blocks, 24);
    const ProgramOutput out = run(config(2, 256, 256, 256, true));
    EXPECT_EQ(out.results.extras.value("comm_sub_m", 0), 64) << out.results.extras.dump();
}

// Reads the pipelined view's event log of one run.
struct LogView {
    ProgramOutput out;
    SubtileArTiling tiling;
    RunRequest cfg;

    bool comm(const InstrRecord& r) const { return r.core_type == CoreType::AIV; }
    std::string name(const InstrRecord& r) const { return out.bench.signal_name(r.peer, r.address); }
    // The (tile id, stripe) an AG store into `rank`'s reduced_output at `address` writes.
    std::pair<int, int> subtile_at(int rank, std::int64_t address) const {
        const AscendArShape& s = tiling.shape();
        const std::int64_t offset = address - out.bench.out_base[static_cast<std::size_t>(rank)];
        const int row = static_cast<int>(offset / (2LL * s.n));
        const int col = static_cast<int>(offset % (2LL * s.n) / 2);
        const int mi = row / s.base_m;
        const int ni = col / s.base_n;
        const int nt = tiling.n_tiles();
        return {mi * nt + ni, row % s.base_m / tiling.sub_m()};  // the row-major tile id
    }
};

LogView logged_run(const Shape& s) {
    const Profile p = test::b1_profile();
    const ResolvedRun run = resolve_run(config_of(s, true), p);
    const RunRequest& cfg = run.request;
    const AscendArShape shape{cfg.ranks, (s.m + 127) / 128 * 128, s.k, (s.n + 255) / 256 * 256, 128, 256,
                              *cfg.compute_blocks, *cfg.comm_blocks};
    RunOutputs logged;
    logged.record_log = true;
    return LogView{run_program(run, p, logged), SubtileArTiling(shape, s.sub_m.value_or(64)), cfg};
}

// Per rank: every subtile of every tile is loaded once and atomically added once (32 KiB), two
// notifies each to its owner; every owned subtile is loaded and stored once per peer. The bytes
// across the links are exactly that.
TEST(MatmulAllReduceAscendSubtile, EachRankMovesWhatThePublishedKernelMoves) {
    const Shape s{4, 1280, 256, 768, 7, 3, std::nullopt};
    const LogView v = logged_run(s);
    const SubtileArTiling& t = v.tiling;
    const int n = s.ranks;
    const std::int64_t subBytes = 64 * 256 * 2;
    const int subtiles = t.tiles() * t.subtiles_per_tile();
    for (int r = 0; r < n; ++r) {
        int loads = 0, adds = 0, stores = 0, readyNotifies = 0, summaryNotifies = 0;
        for (const InstrRecord& rec : v.out.bench.pipelined_log) {
            if (rec.rank != r || !v.comm(rec)) continue;
            if (rec.op == Opcode::TLOAD) {
                ++loads;
                EXPECT_EQ(rec.bytes, subBytes);
            } else if (rec.op == Opcode::TSTORE_ATOMIC_ADD) {
                ++adds;
                EXPECT_EQ(rec.bytes, subBytes);
            } else if (rec.op == Opcode::TSTORE) {
                ++stores;
                EXPECT_NE(rec.peer, r);
            } else if (rec.op == Opcode::TNOTIFY) {
                const std::string name = v.name(rec);
                if (name.rfind("subtile_ready[", 0) == 0) ++readyNotifies;
                if (name.rfind("ag_summary[", 0) == 0) ++summaryNotifies;
            }
        }
        const int owned = t.owned_subtiles(r);
        EXPECT_EQ(adds, subtiles) << "rank " << r;
        EXPECT_EQ(readyNotifies, subtiles) << "rank " << r;
        EXPECT_EQ(summaryNotifies, subtiles) << "rank " << r;
        EXPECT_EQ(stores, owned * (n - 1)) << "rank " << r;
        EXPECT_EQ(loads, subtiles + owned * (n - 1))
            << "rank " << r << ": one RS load per subtile, one AG load per peer";
        const std::int64_t remote = (subtiles - owned) * subBytes + std::int64_t{owned} * (n - 1) * subBytes;
        EXPECT_EQ(v.out.bench.per_rank[static_cast<std::size_t>(r)].remote_store_bytes, remote) << "rank " << r;
    }
}

// Each owned subtile goes to the ranks - 1 peers in a row, from the rotated first peer, sent by
// the comm block of the reversed stripe.
TEST(MatmulAllReduceAscendSubtile, AllGatherSendsEachOwnedSubtileFromItsBlockInRotatedPeerOrder) {
    const Shape s{8, 1024, 256, 1024, 5, 4, std::nullopt};
    const LogView v = logged_run(s);
    const SubtileArTiling& t = v.tiling;
    for (int r = 0; r < s.ranks; ++r) {
        std::map<int, std::vector<InstrRecord>> storesOf;  // by comm block, in issue order
        for (const InstrRecord& rec : v.out.bench.pipelined_log)
            if (rec.rank == r && v.comm(rec) && rec.op == Opcode::TSTORE) storesOf[rec.block].push_back(rec);
        std::set<int> sent;
        for (auto& [block, stores] : storesOf) {
            std::stable_sort(stores.begin(), stores.end(),
                             [](const InstrRecord& a, const InstrRecord& b) { return a.start < b.start; });
            ASSERT_EQ(stores.size() % (s.ranks - 1), 0u);
            const std::vector<int> assigned = t.ag_assigned(r, block);
            for (std::size_t i = 0; i < stores.size(); i += s.ranks - 1) {
                const auto [tile, stripe] = v.subtile_at(stores[i].peer, stores[i].address);
                const int l = t.local_id(tile, stripe);
                EXPECT_EQ(t.owner(tile), r);
                EXPECT_NE(std::find(assigned.begin(), assigned.end(), l), assigned.end())
                    << "rank " << r << " block " << block << " subtile " << l;
                EXPECT_TRUE(sent.insert(l).second);
                for (int p = 0; p < s.ranks - 1; ++p) {
                    const InstrRecord& rec = stores[i + static_cast<std::size_t>(p)];
                    EXPECT_EQ(rec.peer, t.ag_peer(r, l, p)) << "rank " << r << " subtile " << l << " round " << p;
                    EXPECT_EQ(v.subtile_at(rec.peer, rec.address), std::make_pair(tile, stripe));
                }
            }
        }
        EXPECT_EQ(static_cast<int>(sent.size()), t.owned_subtiles(r)) << "rank " << r;
    }
}

// What the compute kernel enqueues: data[slot] of queue q holds the row-major id of the block's
// slot-th tile, and the comm kernel adds each of its stripes at that id's owner.
TEST(MatmulAllReduceAscendSubtile, QueuesCarryRowMajorIdsAndTheirOwnersGetTheAdds) {
    const Shape s{4, 1280, 256, 768, 7, 3, std::nullopt};  // 3 tile columns: rows of 3, every other one reversed
    const LogView v = logged_run(s);
    const SubtileArTiling& t = v.tiling;
    for (int r = 0; r < s.ranks; ++r) {
        std::map<std::pair<int, int>, int> entry;  // (queue, slot) -> value
        std::map<int, std::set<int>> addsAt;       // owner rank -> tile ids it got adds for
        for (const InstrRecord& rec : v.out.bench.pipelined_log) {
            if (rec.rank != r) continue;
            int q = 0, slot = 0;
            if (rec.op == Opcode::TNOTIFY && !v.comm(rec) &&
                std::sscanf(v.name(rec).c_str(), "ready_queue[%d].data[%d]", &q, &slot) == 2)
                entry[{q, slot}] = rec.value;
            if (rec.op == Opcode::TSTORE_ATOMIC_ADD) {
                const int target = rec.peer < 0 ? r : rec.peer;  // a local store logs no peer
                addsAt[target].insert(v.subtile_at(target, rec.address).first);
            }
        }
        EXPECT_EQ(entry.at({0, 3}), 5);  // linear 3 = row 1, column 0 -> reversed: column 2, id 5
        EXPECT_EQ(entry.at({0, 4}), 4);
        for (int q = 0; q < 7; ++q)
            for (int slot = 0; slot < t.block_count(q); ++slot)
                EXPECT_EQ(entry.at({q, slot}), t.tile_id(t.block_first(q) + slot)) << "queue " << q << " slot " << slot;
        for (const auto& [owner, ids] : addsAt)
            for (int id : ids) EXPECT_EQ(id % s.ranks, owner) << "rank " << r << " tile " << id;
    }
}

// The pending tail: a tile's second stripe is stored and published only after the block has
// dequeued its next tile (so after that tile's enqueue became visible); its first stripe goes
// before. The block's last tile is flushed.
TEST(MatmulAllReduceAscendSubtile, SecondStripeWaitsForTheBlocksNextTile) {
    // K = 8192: a tile's K loop (~36 us) is longer than the two steps of a tile's stripes, so
    // the comm block is idle when the next tile arrives.
    const Shape s{2, 1024, 8192, 512, 4, 4, std::nullopt};
    const LogView v = logged_run(s);
    const SubtileArTiling& t = v.tiling;
    for (int r = 0; r < s.ranks; ++r) {
        std::map<std::pair<int, int>, SimTime> enqueued;   // (queue, slot) -> count visible
        std::map<std::pair<int, int>, SimTime> published;  // (tile, stripe) -> subtile_ready notify issued
        for (const InstrRecord& rec : v.out.bench.pipelined_log) {
            if (rec.rank != r || rec.op != Opcode::TNOTIFY) continue;
            const std::string name = v.name(rec);
            int q = 0, l = 0;
            const bool isCount = name.size() > 6 && name.compare(name.size() - 6, 6, ".count") == 0;
            if (!v.comm(rec) && isCount && std::sscanf(name.c_str(), "ready_queue[%d]", &q) == 1) {
                enqueued[{q, rec.value - 1}] = rec.visible;
            } else if (v.comm(rec) && std::sscanf(name.c_str(), "subtile_ready[%d]", &l) == 1) {
                const int tile = t.tile_of_local(rec.peer, l);
                published[{tile, t.stripe_of_local(l)}] = rec.start;
            }
        }
        for (int q = 0; q < 4; ++q) {
            const int first = t.block_first(q);
            const int count = t.block_count(q);
            ASSERT_GT(count, 1);
            for (int j = 0; j + 1 < count; ++j) {
                const SimTime next = enqueued.at({q, j + 1});
                const int tile = t.tile_id(first + j);
                EXPECT_LT(published.at({tile, 0}), next) << "rank " << r << " tile " << tile;
                EXPECT_GT(published.at({tile, 1}), next) << "rank " << r << " tile " << tile;
            }
            EXPECT_EQ(published.count({t.tile_id(first + count - 1), 1}), 1u);  // flushed
        }
    }
}

// The race fault is reported on the kernel that has it (tests/kernels/op_conformance_test.cpp: every
// fault is caught).
TEST(MatmulAllReduceAscendSubtile, TheSanitizerNamesTheKernelOfTheRace) {
    RunRequest cfg = config(2, 512, 512, 512);
    cfg.sanitize = true;
    const ProgramOutput out = run(cfg, "ready_before_store");
    ASSERT_GT(out.bench.sanitizer_total, 0u);
    const std::string report = format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
    EXPECT_NE(report.find("GemmCommAllKernel"), std::string::npos) << report;
}

TEST(MatmulAllReduceAscendSubtile, SanitizerFindsNothingWithUnequalAndFewerCommBlocks) {
    for (const Shape& s : {Shape{4, 1280, 256, 768, 7, 3, std::nullopt}, Shape{8, 1024, 256, 1024, 5, 4, 32}}) {
        RunRequest cfg = config_of(s);
        cfg.sanitize = true;
        const ProgramOutput out = run(cfg);
        EXPECT_EQ(out.bench.sanitizer_total, 0u)
            << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
        EXPECT_EQ(out.results.verification, Verification::Passed);
    }
}

TEST(MatmulAllReduceAscendSubtile, FunctionalAndTimingOnlyAgreeAndRepeat) {
    const Shape s{4, 1280, 256, 768, 7, 3, std::nullopt};
    const ProgramOutput functional = run(config_of(s));
    const ProgramOutput timing = run(config_of(s, true));
    const ProgramOutput again = run(config_of(s, true));
    EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us);
    EXPECT_EQ(functional.results.times.seq_comm_us, timing.results.times.seq_comm_us);
    EXPECT_EQ(functional.results.times.seq_compute_us, timing.results.times.seq_compute_us);
    EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us);
    EXPECT_EQ(to_json(timing.results).dump(), to_json(again.results).dump());
    EXPECT_EQ(timing.results.verification, Verification::Skipped);
}

// The published default shape, timing-only (about half a second): the views keep their order,
// every rank moves exactly the published traffic (ranks 0-1 own 33 tiles, ranks 2-7 own 32), and
// the compute kernel takes about as long as the older version's: the balanced split keeps the
// longest block at 11 tiles, and it is a little faster, since with 6 blocks of 10 tiles (not 23
// of 11) fewer cores share the chip's L2 during the last tile.
TEST(MatmulAllReduceAscendSubtile, DefaultShapeTimingOnly) {
    const ProgramOutput out = run(config(8, 5416, 6144, 1408, true));
    expect_view_invariants(out);
    EXPECT_EQ(out.results.id.run.compute_blocks, 24);
    EXPECT_EQ(out.results.id.run.comm_blocks, 24);
    const std::int64_t subBytes = 64 * 256 * 2;
    for (int r = 0; r < 8; ++r) {
        const int ownedTiles = r < 2 ? 33 : 32;
        const std::int64_t rs = std::int64_t{258 - ownedTiles} * 2 * subBytes;
        const std::int64_t ag = std::int64_t{ownedTiles} * 2 * 7 * subBytes;
        EXPECT_EQ(out.bench.per_rank[static_cast<std::size_t>(r)].remote_store_bytes, rs + ag) << "rank " << r;
    }
    RunRequest older = config(8, 5416, 6144, 1408, true);
    older.variant = "ascend";
    const double older_us = run(older).results.times.compute_only_us;
    EXPECT_LE(out.results.times.compute_only_us, older_us);
    EXPECT_GT(out.results.times.compute_only_us, older_us * 0.93);
}

TEST(MatmulAllReduceAscendSubtile, RefusesWhatTheExampleDoesNotDo) {
    RunRequest k = config(2, 512, 320, 512);
    EXPECT_NE(test::refusal_of(k).find("--gk 320"), std::string::npos) << test::refusal_of(k);
    RunRequest subM = config(2, 512, 512, 512);
    subM.knobs["comm_sub_m"] = 48;
    EXPECT_NE(test::refusal_of(subM).find("--comm-sub-m 48"), std::string::npos) << test::refusal_of(subM);
    EXPECT_NE(test::refusal_of(subM).find("nearest valid: 64"), std::string::npos) << test::refusal_of(subM);
    RunRequest wholeTile = config(2, 512, 512, 512);
    wholeTile.knobs["comm_sub_m"] = 128;  // three 64 KiB UB buffers: more than the 184 KiB of UB
    EXPECT_NE(test::refusal_of(wholeTile).find("--comm-sub-m 128"), std::string::npos) << test::refusal_of(wholeTile);
    EXPECT_NE(test::refusal_of(wholeTile).find("nearest valid: 64"), std::string::npos) << test::refusal_of(wholeTile);
    RunRequest too_many = config(2, 512, 512, 512);
    too_many.comm_blocks = 49;
    EXPECT_NE(test::refusal_of(too_many).find("--comm-blocks 49"), std::string::npos) << test::refusal_of(too_many);
    RunRequest bias = config(2, 512, 512, 512);
    bias.bias = kernels::BiasKind::N;
    EXPECT_FALSE(test::refusal_of(bias).empty());
    RunRequest fp32 = config(2, 512, 512, 512);
    fp32.out_dtype = DType::F32;
    EXPECT_FALSE(test::refusal_of(fp32).empty());
    // Unlike the older version, fewer comm blocks than compute blocks are fine.
    RunRequest fewer = config(2, 512, 512, 512);
    fewer.compute_blocks = 8;
    fewer.comm_blocks = 4;
    EXPECT_EQ(test::refusal_of(fewer), "");
}

}  // namespace matmul_all_reduce_ascend_subtile_test
}  // namespace tandem::host
