// The chip's remote port (interconnect.chip_remote_gb_s): all the remote traffic a chip's cores
// issue shares it, one direction each (stores to peers go out, loads from peers come in), on top
// of each link's own bandwidth. Expected times are worked out by hand with round numbers: links
// of 10 GB/s, a port of 25 GB/s, a per-block remote rate (100 GiB/s) that never binds, and 64 KiB
// tiles, so one tile alone on a link takes 65536 B / 10 GB/s = 6553.6 ns.
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

Profile port_profile(double port_gb_s) {
    Profile p = test::b1_profile();
    p.interconnect.topology = TopologyKind::FullMesh;
    p.interconnect.link_gb_s = 10;
    p.interconnect.chip_remote_gb_s = port_gb_s;
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

// Three peers at once: two links run full (20 GB/s of the port), the third gets the 5 GB/s left
// until they finish, then its link's 10: 32768 B at 5 GB/s + 32768 B at 10 GB/s = 1.5 tile times.
TEST(ChipPort, StoresToThreePeersShareThePort) {
    const std::vector<SimTime> t = remote_move_times(port_profile(25), {1, 2, 3}, Dir::Store);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, kTileOnLinkPs, kTileOnLinkPs * 3 / 2}));
}

// A port wide enough for three links changes nothing: each store takes its link's time.
TEST(ChipPort, WidePortLeavesEveryLinkItsBandwidth) {
    const std::vector<SimTime> t = remote_move_times(port_profile(30), {1, 2, 3}, Dir::Store);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, kTileOnLinkPs, kTileOnLinkPs}));
}

// One peer: the link binds long before the port (as in every 2-rank calibration row).
TEST(ChipPort, OnePeerIsBoundByItsLink) {
    const std::vector<SimTime> t = remote_move_times(port_profile(12), {1}, Dir::Store);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs}));
}

// Loads from peers share the port's incoming direction exactly as stores share the outgoing one.
TEST(ChipPort, LoadsFromThreePeersShareThePortIncoming) {
    const std::vector<SimTime> t = remote_move_times(port_profile(25), {1, 2, 3}, Dir::Load);
    EXPECT_EQ(t, (std::vector<SimTime>{kTileOnLinkPs, kTileOnLinkPs, kTileOnLinkPs * 3 / 2}));
}

}  // namespace
}  // namespace tandem
