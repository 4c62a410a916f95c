// A cluster's port (sim/mem/cluster_port.hpp, sim/MODEL.md "A cluster's port"): an AIC's GM -> L1
// loads slow down while the AIVs of its own cluster hold remote reads in flight, and not while
// another cluster's do; the readers run on another stream, so what the loads see went through
// the window barriers, and the times are the same whatever the host threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/mem/cluster_port.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace cluster_port_test {

constexpr int kCols = 256;
constexpr int kReadRows = 32;  // 16 KiB per remote read: longer than the A2 core's window (4 KiB)
constexpr int kReads = 60;     // about 170 us of reads per AIV
constexpr int kLoadRows = 64;  // 32 KiB per GM -> L1 load
constexpr int kLoads = 300;    // about 60 us of loads alone

Profile port_profile() {
    Profile p = test::b1_profile();
    p.pipes.cluster_port_bytes = 16384;
    p.pipes.cluster_port_sample_ns = 20000;
    return p;
}

// AIV blocks `readers` (block b on AIV core b, of cluster b / 2) pull rank 1's window over and
// over on one stream while one AIC block (core 0, cluster 0) loads local GM into L1 on another,
// starting 30 us later; returns the loads kernel's duration in ps.
SimTime loads_time(const std::set<int>& readers, int host_threads) {
    Runtime rt(port_profile(), ClusterOptions{2, DataMode::TimingOnly, false, false, host_threads});
    constexpr std::int64_t read_bytes = std::int64_t{kReadRows} * kCols * 2;
    constexpr std::int64_t load_bytes = std::int64_t{kLoadRows} * kCols * 2;
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", read_bytes, /*shared=*/true);
    GmAllocation& buf = rt.host(0).malloc("buf", load_bytes);
    SimTime took = 0;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& reads = host.create_stream("reads");
        Stream& loads = host.create_stream("loads");
        reads.launch(KernelLaunch{"reads", CoreType::AIV, 4, [&](BlockCtx& b) -> Task {
            if (!readers.contains(b.block_idx())) co_return;
            Tile& ub = b.alloc_tile(MemKind::UB, kReadRows, kCols, DType::F16, "ub");
            for (int i = 0; i < kReads; ++i) {
                co_await TLOAD(ub, GmTensor(win, 0, kReadRows, kCols, kCols, DType::F16));
                pipe_barrier(b, PIPE_ALL);
            }
        }});
        loads.launch(KernelLaunch{"loads", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tile& l1 = b.alloc_tile(MemKind::L1, kLoadRows, kCols, DType::F16, "l1");
            TSCALAR(b, 54000);  // 30 us of scalar work at 1800 MHz, one cycle each
            for (int i = 0; i < kLoads; ++i) {
                co_await TLOAD(l1, GmTensor(buf, 0, kLoadRows, kCols, kCols, DType::F16));
                pipe_barrier(b, PIPE_ALL);
            }
        }});
        reads.synchronize();
        loads.synchronize();
        const KernelStats& k = loads.kernel_stats().at(0);
        took = k.end - k.start;
    });
    return took;
}

TEST(ClusterPort, AnAicsLoadsSlowWhileItsOwnClustersAivsHoldReads) {
    const SimTime alone = loads_time({}, 2);
    const SimTime own = loads_time({0, 1}, 2);
    const SimTime other = loads_time({2, 3}, 2);
    // Two AIVs hold up to 2 x 4 KiB of a 16 KiB port: the loads get at least 2/3 of their rate.
    EXPECT_GT(static_cast<double>(own), 1.2 * static_cast<double>(alone));
    EXPECT_LT(static_cast<double>(own), 1.6 * static_cast<double>(alone));
    EXPECT_EQ(other, alone) << "another cluster's reads do not touch cluster 0's port";
}

TEST(ClusterPort, WhatTheLoadsSeeIsTheSameWhateverTheHostThreads) {
    const SimTime two = loads_time({0, 1}, 2);
    EXPECT_EQ(loads_time({0, 1}, 1), two);
    EXPECT_EQ(loads_time({0, 1}, 4), two);
}

TEST(ClusterPortHolds, AveragesTheBytesHeldOverAnIntervalSkippingOneProducer) {
    ClusterPortHolds h;
    h.add(1, PortHold{0, 0, 1000, 4096});     // held over all of [0, 1000)
    h.add(2, PortHold{0, 500, 1500, 2048});   // half of it
    h.add(1, PortHold{1, 0, 1000, 9999});     // another cluster
    EXPECT_DOUBLE_EQ(h.mean_held_bytes(0, 0, 1000), 4096 + 1024);
    EXPECT_DOUBLE_EQ(h.mean_held_bytes(0, 0, 1000, 1), 1024);
    EXPECT_DOUBLE_EQ(h.mean_held_bytes(2, 0, 1000), 0);
    h.forget_ending_before(1200);
    EXPECT_EQ(h.size(), 1u);
    EXPECT_DOUBLE_EQ(h.mean_held_bytes(0, 1000, 1500), 2048);
}

// An AIV's back-to-back reads are kept as runs of holds at a steady pace: every mean is what the
// holds kept one by one give, over windows that cut runs anywhere, and the records are few.
TEST(ClusterPortHolds, HoldsAtASteadyPaceAreKeptAsRunsThatAverageAsTheHoldsDo) {
    ClusterPortHolds runs;
    std::vector<std::pair<int, PortHold>> holds;
    // Two AIVs of cluster 0 on source 1, in step (the same spans), 110 ps apart; a third stream's
    // reads of another length and pace; one irregular hold in the middle; a second cluster.
    for (int k = 0; k < 500; ++k) {
        const SimTime b = 1000 + k * SimTime{5710};
        holds.push_back({1, PortHold{0, b, b + 5600, 4096}});
        holds.push_back({1, PortHold{0, b, b + 5600, 4096}});
        if (k % 3 == 0) holds.push_back({7, PortHold{0, 3 * b, 3 * b + 20000, 2048}});
        if (k == 250) holds.push_back({1, PortHold{0, b + 17, b + 900, 512}});
        holds.push_back({2, PortHold{1, b, b + 400, 1024}});
    }
    for (const auto& [source, h] : holds) runs.add(source, h);
    EXPECT_LT(runs.size(), 16u);
    const auto by_hand = [&](int cluster, SimTime from, SimTime to, int skip) {
        std::int64_t byte_ps = 0;
        for (const auto& [source, h] : holds) {
            if (h.cluster != cluster || source == skip) continue;
            const SimTime a = std::max(h.begin, from);
            const SimTime z = std::min(h.end, to);
            if (z > a) byte_ps += h.bytes * (z - a);
        }
        return static_cast<double>(byte_ps) / static_cast<double>(to - from);
    };
    for (SimTime from = 0; from < 3'000'000; from += 7919) {
        for (const SimTime width : {SimTime{1}, SimTime{113}, SimTime{5710}, SimTime{20000}, SimTime{400000}}) {
            for (const int skip : {-1, 1, 7}) {
                EXPECT_EQ(runs.mean_held_bytes(0, from, from + width, skip), by_hand(0, from, from + width, skip));
            }
            EXPECT_EQ(runs.mean_held_bytes(1, from, from + width), by_hand(1, from, from + width, -1));
        }
    }
    // A run is forgotten once its last hold has ended, not before.
    runs.forget_ending_before(1000 + 499 * SimTime{5710} + 5599);
    EXPECT_EQ(runs.mean_held_bytes(0, 1000 + 499 * SimTime{5710}, 1000 + 499 * SimTime{5710} + 5600, 7),
              by_hand(0, 1000 + 499 * SimTime{5710}, 1000 + 499 * SimTime{5710} + 5600, 7));
}

TEST(ClusterPortHolds, RefusesAHoldPastWhatARecordKeeps) {
    ClusterPortHolds h;
    const std::int64_t largest = (std::int64_t{1} << 31) - 1;
    h.add(1, PortHold{0, 0, 1000, largest});
    EXPECT_DOUBLE_EQ(h.mean_held_bytes(0, 0, 1000), static_cast<double>(largest));
    EXPECT_THROW(h.add(1, PortHold{0, 0, 1000, largest + 1}), SimError);
    EXPECT_EQ(h.size(), 1u);
}

}  // namespace cluster_port_test
}  // namespace tandem
