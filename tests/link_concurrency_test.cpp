// Links in concurrent use (interconnect.link_concurrent_gb_s): a remote move that starts while
// another link of its stream still carries traffic runs at no more than the concurrent rate on its
// link, besides the link's own bandwidth. Expected times are worked out by hand with round
// numbers: links of 10 GB/s, a concurrent rate of 5 GB/s, a per-block remote rate (100 GiB/s)
// that never binds, and 64 KiB tiles, so one tile alone on a link takes 65536 B / 10 GB/s =
// 6553.6 ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_time.hpp"
#include "tests/test_support.hpp"

namespace tandem {
namespace {

constexpr int kRows = 128, kCols = 256;  // 64 KiB of fp16
constexpr SimTime kTileOnLinkPs = 6'553'600;

Profile concurrency_profile(double concurrent_gb_s) {
    Profile p = test::b1_profile();
    p.interconnect.topology = TopologyKind::FullMesh;
    p.interconnect.link_gb_s = 10;
    p.interconnect.link_concurrent_gb_s = concurrent_gb_s;
    p.interconnect.remote_store_gib_s = 100;
    return p;
}

enum class Dir { Store, Load };

// Rank 0 runs one AIV block per entry of `peers`: block b moves one tile to (Store) or from
// (Load) the window of rank peers[b]. Returns the durations of those remote moves, as the
// event log records them, minus the fixed GM start-up and link latencies: the transfer alone.
std::vector<SimTime> remote_move_times(const Profile& p, const std::vector<int>& peers, Dir dir) {
    Runtime rt(p, ClusterOptions{4, DataMode::TimingOnly, true});
    std::vector<GmAllocation*> windows;
    for (int r = 0; r < 4; ++r)
        windows.push_back(&rt.cluster().chip(r).gm.allocate("win", kRows * kCols * 2, /*shared=*/true));
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"moves", CoreType::AIV, static_cast<int>(peers.size()), [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ub");
            const GmTensor peer(*windows[static_cast<std::size_t>(peers[static_cast<std::size_t>(b.block_idx())])], 0, kRows,
                                kCols, kCols, DType::F16);
            if (dir == Dir::Store) co_await TSTORE(peer, ub);
            else co_await TLOAD(ub, peer);
        }});
        s.synchronize();
    });
    const SimTime fixed = cycles_to_ps(p.pipes.gm_access_latency_cycles, p.chip.core_clock_mhz) +
                          from_ns(p.interconnect.link_latency_ns);
    std::vector<SimTime> out;
    for (const InstrRecord& r : rt.cluster().event_log())
        if (r.rank == 0 && r.peer > 0 && (r.op == Opcode::TSTORE || r.op == Opcode::TLOAD)) out.push_back(r.end - r.start - fixed);
    std::sort(out.begin(), out.end());
    return out;
}

// Three peers at once, every move issued at the same instant: the first booked finds no other
// link busy and takes its link's 10 GB/s; the two booked after it find a link busy and run at
// 5 GB/s, two tile times. (Who books first is the block order at equal times: an approximation
// of the split, as for every shared resource of the model.)
TEST(LinkConcurrency, StoresToThreePeersRunAtTheConcurrentRate) {
    const std::vector<SimTime> t = remote_move_times(concurrency_profile(5), {1, 2, 3}, Dir::Store);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, 2 * kTileOnLinkPs, 2 * kTileOnLinkPs}));
}

// A concurrent rate above the link's changes nothing: each store takes its link's time.
TEST(LinkConcurrency, ConcurrentRateAboveTheLinkLeavesEveryLinkItsBandwidth) {
    const std::vector<SimTime> t = remote_move_times(concurrency_profile(30), {1, 2, 3}, Dir::Store);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, kTileOnLinkPs, kTileOnLinkPs}));
}

// One peer: its link is the only one in use, however many blocks share it (as in every 2-rank
// calibration row). Two blocks on one link: the first keeps the link's 10 GB/s, the second
// follows it, and neither runs at the concurrent rate.
TEST(LinkConcurrency, OnePeerIsBoundByItsLinkAlone) {
    EXPECT_EQ(remote_move_times(concurrency_profile(2), {1}, Dir::Store), (std::vector<SimTime>{kTileOnLinkPs}));
    EXPECT_EQ(remote_move_times(concurrency_profile(2), {1, 1}, Dir::Store),
              (std::vector<SimTime>{kTileOnLinkPs, 2 * kTileOnLinkPs}));
}

// Loads from peers use the links towards this rank and follow the same rule.
TEST(LinkConcurrency, LoadsFromThreePeersRunAtTheConcurrentRate) {
    const std::vector<SimTime> t = remote_move_times(concurrency_profile(5), {1, 2, 3}, Dir::Load);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, 2 * kTileOnLinkPs, 2 * kTileOnLinkPs}));
}

// One block storing to two peers one after the other: the second move starts after the first
// has left its link, so both run at the link's full rate.
TEST(LinkConcurrency, MovesOneAfterAnotherAreNotConcurrent) {
    const Profile p = concurrency_profile(5);
    Runtime rt(p, ClusterOptions{3, DataMode::TimingOnly, true});
    std::vector<GmAllocation*> windows;
    for (int r = 0; r < 3; ++r)
        windows.push_back(&rt.cluster().chip(r).gm.allocate("win", kRows * kCols * 2, /*shared=*/true));
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"moves", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ub");
            for (int peer = 1; peer <= 2; ++peer)
                co_await TSTORE(GmTensor(*windows[static_cast<std::size_t>(peer)], 0, kRows, kCols, kCols, DType::F16), ub);
        }});
        s.synchronize();
    });
    const SimTime fixed = cycles_to_ps(p.pipes.gm_access_latency_cycles, p.chip.core_clock_mhz) +
                          from_ns(p.interconnect.link_latency_ns);
    std::vector<SimTime> t;
    for (const InstrRecord& r : rt.cluster().event_log())
        if (r.rank == 0 && r.peer > 0 && r.op == Opcode::TSTORE) t.push_back(r.end - r.start - fixed);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, kTileOnLinkPs}));
}

}  // namespace
}  // namespace tandem
