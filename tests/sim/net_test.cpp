// Tests for the network building blocks: the bandwidth calendar (booking transfers over shared
// resources) and the topology (links and routes). All expected times are worked out by hand in
// the comments: 1 GB/s = 1e9 bytes/s moves 1 byte per 1000 ps.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/net/bandwidth_calendar.hpp"
#include "sim/net/topology.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/calendar_checks.hpp"

namespace tandem {
namespace net_test {

constexpr std::int64_t kGBps = 1000 * 1000 * 1000;  // 1 GB/s in bytes/s
constexpr SimTime kUs = kPsPerUs;

// Books over a path given as a braced list of calendars.
SimTime book(std::initializer_list<BandwidthCalendar*> path, SimTime start, double bytes,
             std::int64_t cap) {
    const std::vector<BandwidthCalendar*> hops(path);
    return book_transfer(hops, start, bytes, cap);
}

using test::expect_sim_error;

// ---- BandwidthCalendar ------------------------------------------------------------------------

TEST(BandwidthCalendar, LoneTransferRunsAtItsCap) {
    BandwidthCalendar link("link", 100 * kGBps);
    // 1e6 bytes at 25 GB/s = 40 us.
    EXPECT_EQ(book({&link}, 1000, 1e6, 25 * kGBps), 1000 + 40 * kUs);
    EXPECT_EQ(link.used_at(999), 0);
    EXPECT_EQ(link.used_at(1000), 25 * kGBps);
    EXPECT_EQ(link.used_at(1000 + 40 * kUs - 1), 25 * kGBps);
    EXPECT_EQ(link.used_at(1000 + 40 * kUs), 0);
    EXPECT_DOUBLE_EQ(link.bytes_booked(), 1e6);
}

TEST(BandwidthCalendar, CapAboveCapacityIsLimitedByCapacity) {
    BandwidthCalendar link("link", 100 * kGBps);
    // 1e6 bytes at 100 GB/s = 10 us even though the cap would allow 1000 GB/s.
    EXPECT_EQ(book({&link}, 0, 1e6, 1000 * kGBps), 10 * kUs);
}

TEST(BandwidthCalendar, FullRateTransfersSerialise) {
    BandwidthCalendar link("link", 100 * kGBps);
    // The first keeps the whole link for 1e6 / 100 GB/s = 10 us; the second finds no spare
    // capacity, waits, then moves its 2e6 bytes in 20 us: 3e6 bytes in 30 us = 100 GB/s.
    const SimTime first = book({&link}, 0, 1e6, 100 * kGBps);
    const SimTime second = book({&link}, 0, 2e6, 100 * kGBps);
    EXPECT_EQ(first, 10 * kUs);
    EXPECT_EQ(second, first + 20 * kUs);
    EXPECT_DOUBLE_EQ(link.bytes_booked(), 3e6);
}

TEST(BandwidthCalendar, HalfRateTransfersRunInParallel) {
    BandwidthCalendar link("link", 100 * kGBps);
    // Each takes 50 GB/s, so both fit side by side: 1e6 bytes in 20 us each.
    EXPECT_EQ(book({&link}, 0, 1e6, 50 * kGBps), 20 * kUs);
    EXPECT_EQ(book({&link}, 0, 1e6, 50 * kGBps), 20 * kUs);
    EXPECT_EQ(link.used_at(10 * kUs), 100 * kGBps);
}

TEST(BandwidthCalendar, LaterTransferTakesWhatIsLeftThenSpeedsUp) {
    BandwidthCalendar link("link", 100 * kGBps);
    // First: 6e5 bytes at 60 GB/s over [0, 10 us).
    EXPECT_EQ(book({&link}, 0, 6e5, 60 * kGBps), 10 * kUs);
    // Second, from 0: 40 GB/s for 10 us = 4e5 bytes, then the remaining 6e5 at 100 GB/s takes
    // 6 us: done at 16 us.
    EXPECT_EQ(book({&link}, 0, 1e6, 100 * kGBps), 16 * kUs);
    EXPECT_EQ(link.used_at(5 * kUs), 100 * kGBps);
    EXPECT_EQ(link.used_at(12 * kUs), 100 * kGBps);
    EXPECT_EQ(link.used_at(16 * kUs), 0);
}

TEST(BandwidthCalendar, TransferStartingMidwayWaitsForSpareCapacity) {
    BandwidthCalendar link("link", 100 * kGBps);
    EXPECT_EQ(book({&link}, 0, 1e6, 100 * kGBps), 10 * kUs);
    // Starts at 4 us while the link is full: waits until 10 us, then 5e5 bytes take 5 us.
    EXPECT_EQ(book({&link}, 4 * kUs, 5e5, 100 * kGBps), 15 * kUs);
}

TEST(BandwidthCalendar, PathIsLimitedByItsSlowestResource) {
    BandwidthCalendar fast("fast", 100 * kGBps);
    BandwidthCalendar slow("slow", 40 * kGBps);
    // 1e6 bytes at min(100, 40) GB/s = 25 us; both resources carry the 40 GB/s.
    EXPECT_EQ(book({&fast, &slow}, 0, 1e6, 1000 * kGBps), 25 * kUs);
    EXPECT_EQ(fast.used_at(0), 40 * kGBps);
    EXPECT_EQ(slow.used_at(0), 40 * kGBps);
    EXPECT_DOUBLE_EQ(fast.bytes_booked(), 1e6);
    EXPECT_DOUBLE_EQ(slow.bytes_booked(), 1e6);
}

TEST(BandwidthCalendar, PathSeesContentionOnEachResource) {
    BandwidthCalendar fast("fast", 100 * kGBps);
    BandwidthCalendar slow("slow", 40 * kGBps);
    // Slow already carries 20 GB/s over [0, 10 us) (2e5 bytes).
    EXPECT_EQ(book({&slow}, 0, 2e5, 20 * kGBps), 10 * kUs);
    // Across both: 20 GB/s for 10 us = 2e5 bytes, then 8e5 bytes at 40 GB/s = 20 us: 30 us.
    EXPECT_EQ(book({&fast, &slow}, 0, 1e6, 1000 * kGBps), 30 * kUs);
    EXPECT_EQ(fast.used_at(5 * kUs), 20 * kGBps);
    EXPECT_EQ(fast.used_at(15 * kUs), 40 * kGBps);
    EXPECT_EQ(slow.used_at(5 * kUs), 40 * kGBps);
}

TEST(BandwidthCalendar, BreakpointsThatDoNotLimitTheRateAddNoneElsewhere) {
    BandwidthCalendar fabric("fabric", 1000 * kGBps);
    BandwidthCalendar link("link", 100 * kGBps);
    // The fabric carries 100 GB/s over [2 us, 4 us) (2e5 bytes); plenty is left.
    EXPECT_EQ(book({&fabric}, 2 * kUs, 2e5, 100 * kGBps), 4 * kUs);
    // 1e6 bytes at 50 GB/s = 20 us; the rate never changes, so the link gets just two
    // breakpoints (0 and 20 us) while the fabric has 0, 2, 4 and 20 us.
    EXPECT_EQ(book({&fabric, &link}, 0, 1e6, 50 * kGBps), 20 * kUs);
    EXPECT_EQ(link.breakpoint_count(), 2U);
    EXPECT_EQ(fabric.breakpoint_count(), 4U);
    EXPECT_EQ(fabric.used_at(1 * kUs), 50 * kGBps);
    EXPECT_EQ(fabric.used_at(3 * kUs), 150 * kGBps);
    EXPECT_EQ(fabric.used_at(4 * kUs), 50 * kGBps);
    EXPECT_EQ(link.used_at(3 * kUs), 50 * kGBps);
}

TEST(BandwidthCalendar, EndIsRoundedUpToWholePicosecond) {
    BandwidthCalendar link("link", 3000 * kGBps);
    // 10 bytes at 3e12 bytes/s = 3.33 ps, rounded up to 4 ps.
    EXPECT_EQ(book({&link}, 100, 10, 3000 * kGBps), 104);
    // 3 bytes exactly fill 1 ps: no rounding.
    EXPECT_EQ(book({&link}, 200, 3, 3000 * kGBps), 201);
    // 0.5 bytes at 1 GB/s = 500 ps: fractional byte counts are exact too.
    EXPECT_EQ(book({}, 0, 0.5, kGBps), 500);
}

TEST(BandwidthCalendar, ZeroBytesFinishAtOnceAndBookNothing) {
    BandwidthCalendar link("link", 100 * kGBps);
    EXPECT_EQ(book({&link}, 1234, 0, 100 * kGBps), 1234);
    EXPECT_EQ(link.breakpoint_count(), 0U);
    EXPECT_DOUBLE_EQ(link.bytes_booked(), 0);
}

TEST(BandwidthCalendar, EmptyPathIsLimitedByTheCapAlone) {
    // 1e6 bytes at 8 GB/s = 125 us.
    EXPECT_EQ(book({}, 7, 1e6, 8 * kGBps), 7 + 125 * kUs);
}

TEST(BandwidthCalendar, BackToBackTransfersMergeBreakpoints) {
    BandwidthCalendar link("link", 100 * kGBps);
    SimTime t = 0;
    for (int i = 0; i < 100; ++i) t = book({&link}, t, 1e5, 100 * kGBps);
    EXPECT_EQ(t, 100 * kUs);
    // One busy segment [0, 100 us) at full rate: a start and an end breakpoint only.
    EXPECT_EQ(link.breakpoint_count(), 2U);
    EXPECT_EQ(link.used_at(50 * kUs), 100 * kGBps);
}

// Full-rate transfers on one link form a FIFO queue: each starts when both it has arrived and
// the previous one has finished, and lasts ceil(bytes / capacity). Checked exactly on a
// pseudo-random but fixed sequence (raw mt19937 output is the same on every platform).
TEST(BandwidthCalendar, FullRateTransfersBehaveAsAFifoQueue) {
    constexpr std::int64_t kCapacity = 7 * kGBps;
    BandwidthCalendar link("link", kCapacity);
    std::mt19937 random(12345);
    SimTime start = 0;
    SimTime previous_end = 0;
    for (int i = 0; i < 2000; ++i) {
        start += static_cast<SimTime>(random() % 200000);
        const auto bytes = static_cast<std::int64_t>(random() % 5000);
        const SimTime duration = (bytes * 1000 * kGBps + kCapacity - 1) / kCapacity;  // in ps
        const SimTime expected = bytes == 0 ? start : std::max(start, previous_end) + duration;
        ASSERT_EQ(book({&link}, start, static_cast<double>(bytes), kCapacity), expected) << i;
        if (bytes != 0) previous_end = expected;
        link.forget_before(start);
    }
}

// Whatever the caps and overlaps, no instant is booked beyond capacity, and each transfer takes
// at least as long as its own cap allows.
TEST(BandwidthCalendar, NeverBooksBeyondCapacity) {
    BandwidthCalendar a("a", 50 * kGBps), b("b", 30 * kGBps);
    std::mt19937 random(777);
    SimTime start = 0;
    std::vector<SimTime> instants;
    for (int i = 0; i < 500; ++i) {
        start += static_cast<SimTime>(random() % 50000);
        const test::RandomTransfer x = test::random_transfer(random);
        const SimTime end = x.path == 0   ? book({&a}, start, x.bytes, x.cap_bytes_per_s)
                            : x.path == 1 ? book({&b}, start, x.bytes, x.cap_bytes_per_s)
                                          : book({&b, &a}, start, x.bytes, x.cap_bytes_per_s);
        EXPECT_GE(end, start + x.min_duration_ps());
        instants.push_back(start);
        instants.push_back(end);
    }
    for (SimTime t : instants) {
        EXPECT_LE(a.used_at(t), a.capacity());
        EXPECT_LE(b.used_at(t), b.capacity());
        EXPECT_GE(a.used_at(t), 0);
        EXPECT_GE(b.used_at(t), 0);
    }
}

// A fixed mixed workload; returns every end time. With `forget`, history is pruned before each
// booking at that booking's start (allowed: starts never decrease).
std::vector<SimTime> run_workload(bool forget, BandwidthCalendar& a, BandwidthCalendar& b) {
    std::vector<SimTime> ends;
    for (int i = 0; i < 50; ++i) {
        const SimTime start = static_cast<SimTime>(i) * 3 * kUs;
        if (forget) {
            a.forget_before(start);
            b.forget_before(start);
        }
        const double bytes = 1e5 + 3e4 * (i % 7);
        const std::int64_t cap = (10 + 15 * (i % 5)) * kGBps;
        if (i % 3 == 0) {
            ends.push_back(book({&a}, start, bytes, cap));
        } else if (i % 3 == 1) {
            ends.push_back(book({&b}, start, bytes, cap));
        } else {
            ends.push_back(book({&a, &b}, start, bytes, cap));
        }
    }
    return ends;
}

TEST(BandwidthCalendar, PruningDoesNotChangeResults) {
    BandwidthCalendar a1("a", 60 * kGBps), b1("b", 45 * kGBps);
    BandwidthCalendar a2("a", 60 * kGBps), b2("b", 45 * kGBps);
    const std::vector<SimTime> kept = run_workload(false, a1, b1);
    const std::vector<SimTime> pruned = run_workload(true, a2, b2);
    EXPECT_EQ(kept, pruned);
    EXPECT_LT(a2.breakpoint_count() + b2.breakpoint_count(),
              a1.breakpoint_count() + b1.breakpoint_count());
    for (SimTime t = 147 * kUs; t < 400 * kUs; t += 1 * kUs) {
        EXPECT_EQ(a1.used_at(t), a2.used_at(t)) << t;
        EXPECT_EQ(b1.used_at(t), b2.used_at(t)) << t;
    }
}

TEST(BandwidthCalendar, ForgettingEverythingLeavesAnEmptyCalendar) {
    BandwidthCalendar link("link", 100 * kGBps);
    book({&link}, 0, 1e6, 50 * kGBps);  // [0, 20 us)
    link.forget_before(10 * kUs);
    EXPECT_EQ(link.used_at(10 * kUs), 50 * kGBps);  // the booking in force is kept
    link.forget_before(20 * kUs);
    EXPECT_EQ(link.breakpoint_count(), 0U);
}

TEST(BandwidthCalendar, RejectsBadRequests) {
    BandwidthCalendar link("hbm fabric", 100 * kGBps);
    expect_sim_error([] { BandwidthCalendar("bad", 0); }, {"bad", "capacity"});
    expect_sim_error([&] { book({&link}, 0, 1e3, 0); }, {"rate cap", "0"});
    expect_sim_error([&] { book({&link}, 0, -1, kGBps); }, {"byte count"});
    expect_sim_error([&] { book({&link}, 0, std::numeric_limits<double>::quiet_NaN(), kGBps); },
                     {"byte count"});
    expect_sim_error([&] { book({&link}, -1, 1e3, kGBps); }, {"start time", "-1"});
    expect_sim_error([&] { book({&link, &link}, 0, 1e3, kGBps); }, {"hbm fabric", "twice"});
    link.forget_before(5000);
    expect_sim_error([&] { book({&link}, 4999, 1e3, kGBps); }, {"hbm fabric", "4999", "5000"});
    // Rejected requests leave the calendar untouched and still usable.
    EXPECT_EQ(link.breakpoint_count(), 0U);
    EXPECT_EQ(book({&link}, 5000, 1e3, kGBps), 5000 + 1000 * 1000);
}

// ---- Topology -----------------------------------------------------------------------------

// Checks that a route starts at src, ends at dst and that each hop starts where the last ended.
void expect_connected(const Topology& topo, int src, int dst) {
    const Topology::Route hops = topo.route(src, dst);
    ASSERT_GT(hops.size(), 0U);
    int at = src;
    for (int id : hops) {
        ASSERT_EQ(topo.link(id).src, at) << src << "->" << dst;
        at = topo.link(id).dst;
    }
    EXPECT_EQ(at, dst);
}

std::vector<std::array<int, 2>> hop_pairs(const Topology& topo, int src, int dst) {
    std::vector<std::array<int, 2>> pairs;
    for (int id : topo.route(src, dst)) pairs.push_back({topo.link(id).src, topo.link(id).dst});
    return pairs;
}

TEST(Topology, FullMeshHasOneLinkPerOrderedPair) {
    const Topology mesh(TopologyKind::FullMesh, 8);
    EXPECT_EQ(mesh.ranks(), 8);
    EXPECT_EQ(mesh.link_count(), 8 * 7);
    for (int s = 0; s < 8; ++s) {
        for (int d = 0; d < 8; ++d) {
            if (s == d) continue;
            ASSERT_EQ(mesh.route(s, d).size(), 1U);
            const Topology::Link& l = mesh.link(mesh.route(s, d)[0]);
            EXPECT_EQ(l.src, s);
            EXPECT_EQ(l.dst, d);
            EXPECT_EQ(l.lane, 0);
        }
    }
    EXPECT_EQ(mesh.describe_link(mesh.route(2, 3)[0]), "link 2->3");
}

TEST(Topology, LargeFullMesh) {
    const Topology mesh(TopologyKind::FullMesh, 384);
    EXPECT_EQ(mesh.link_count(), 384 * 383);
    const Topology::Link& l = mesh.link(mesh.route(383, 0)[0]);
    EXPECT_EQ(l.src, 383);
    EXPECT_EQ(l.dst, 0);
}

TEST(Topology, RingTakesTheShorterWayClockwiseOnATie) {
    const Topology ring(TopologyKind::Ring, 8);
    EXPECT_EQ(ring.link_count(), 16);
    using Hops = std::vector<std::array<int, 2>>;
    EXPECT_EQ(hop_pairs(ring, 0, 3), (Hops{{0, 1}, {1, 2}, {2, 3}}));
    EXPECT_EQ(hop_pairs(ring, 0, 5), (Hops{{0, 7}, {7, 6}, {6, 5}}));
    EXPECT_EQ(hop_pairs(ring, 0, 4), (Hops{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
    EXPECT_EQ(hop_pairs(ring, 6, 1), (Hops{{6, 7}, {7, 0}, {0, 1}}));
    EXPECT_EQ(hop_pairs(ring, 1, 6), (Hops{{1, 0}, {0, 7}, {7, 6}}));
    EXPECT_EQ(hop_pairs(ring, 5, 1), (Hops{{5, 6}, {6, 7}, {7, 0}, {0, 1}}));
    EXPECT_EQ(ring.describe_link(ring.route(2, 3)[0]), "link 2->3");
}

TEST(Topology, SmallRings) {
    const Topology one(TopologyKind::Ring, 1);
    EXPECT_EQ(one.link_count(), 0);
    const Topology two(TopologyKind::Ring, 2);
    EXPECT_EQ(two.link_count(), 2);
    using Hops = std::vector<std::array<int, 2>>;
    EXPECT_EQ(hop_pairs(two, 0, 1), (Hops{{0, 1}}));
    EXPECT_EQ(hop_pairs(two, 1, 0), (Hops{{1, 0}}));
    const Topology three(TopologyKind::Ring, 3);
    EXPECT_EQ(three.link_count(), 6);
    EXPECT_EQ(hop_pairs(three, 0, 2), (Hops{{0, 2}}));
    const Topology double_two(TopologyKind::DoubleRing, 2);
    EXPECT_EQ(double_two.link_count(), 4);
}

TEST(Topology, DoubleRingSpreadsPairsOverLanesByParity) {
    const Topology rings(TopologyKind::DoubleRing, 8);
    EXPECT_EQ(rings.link_count(), 32);
    for (int id : rings.route(1, 3)) EXPECT_EQ(rings.link(id).lane, 1);  // min(1, 3) odd
    for (int id : rings.route(0, 3)) EXPECT_EQ(rings.link(id).lane, 0);  // min(0, 3) even
    for (int id : rings.route(2, 7)) EXPECT_EQ(rings.link(id).lane, 0);
    using Hops = std::vector<std::array<int, 2>>;
    EXPECT_EQ(hop_pairs(rings, 1, 3), (Hops{{1, 2}, {2, 3}}));
    EXPECT_EQ(hop_pairs(rings, 2, 7), (Hops{{2, 1}, {1, 0}, {0, 7}}));
    // The same hop on the two lanes is two distinct links.
    const int hop_on_ring1 = rings.route(1, 2)[0];  // 1->2, min 1: ring 1
    const int hop_on_ring0 = rings.route(0, 2)[1];  // second hop of 0->2, min 0: ring 0
    EXPECT_EQ(rings.describe_link(hop_on_ring1), "link 1->2 (ring 1)");
    EXPECT_EQ(rings.describe_link(hop_on_ring0), "link 1->2 (ring 0)");
    EXPECT_NE(hop_on_ring1, hop_on_ring0);
    EXPECT_EQ(rings.describe_link(rings.route(1, 3)[0]), "link 1->2 (ring 1)");
    EXPECT_EQ(rings.describe_link(rings.route(0, 3)[0]), "link 0->1 (ring 0)");
}

// lane = min(src, dst) % 2: neighbour pairs alternate between the rings, so one-hop ring
// traffic uses both rings, and a rank reaches its two neighbours over different rings.
TEST(Topology, DoubleRingNeighboursAlternateLanes) {
    const Topology rings(TopologyKind::DoubleRing, 8);
    for (int s = 0; s + 1 < 8; ++s) {
        EXPECT_EQ(rings.link(rings.route(s, s + 1)[0]).lane, s % 2);
        EXPECT_EQ(rings.link(rings.route(s + 1, s)[0]).lane, s % 2);
    }
    for (int s = 1; s + 1 < 8; ++s)
        EXPECT_NE(rings.link(rings.route(s, s + 1)[0]).lane, rings.link(rings.route(s, s - 1)[0]).lane);
}

TEST(Topology, EveryRouteIsConnectedAndShortest) {
    for (TopologyKind kind :
         {TopologyKind::FullMesh, TopologyKind::Ring, TopologyKind::DoubleRing}) {
        for (int n : {2, 3, 4, 5, 8, 13, 16}) {
            const Topology topo(kind, n);
            std::vector<int> uses(static_cast<std::size_t>(topo.link_count()), 0);
            for (int s = 0; s < n; ++s) {
                for (int d = 0; d < n; ++d) {
                    if (s == d) continue;
                    expect_connected(topo, s, d);
                    const int cw = (d - s + n) % n;
                    const int shortest = kind == TopologyKind::FullMesh ? 1 : std::min(cw, n - cw);
                    EXPECT_EQ(topo.route(s, d).size(), static_cast<std::size_t>(shortest))
                        << s << "->" << d;
                    for (int id : topo.route(s, d)) ++uses[static_cast<std::size_t>(id)];
                }
            }
            // Every link is some pair's route. Not so on a DoubleRing: the parity rule sends a
            // neighbour pair's traffic over one lane only (see DoubleRingNeighboursAlternateLanes).
            if (kind != TopologyKind::DoubleRing) {
                for (int id = 0; id < topo.link_count(); ++id) {
                    EXPECT_GT(uses[static_cast<std::size_t>(id)], 0) << topo.describe_link(id);
                }
            }
        }
    }
}

TEST(Topology, LargeRingRoutes) {
    const Topology rings(TopologyKind::DoubleRing, 384);
    EXPECT_EQ(rings.link_count(), 2 * 2 * 384);
    EXPECT_EQ(rings.route(0, 192).size(), 192U);
    EXPECT_EQ(rings.link(rings.route(0, 192)[0]).dst, 1);  // tie: clockwise
    EXPECT_EQ(rings.route(10, 300).size(), 94U);           // counter-clockwise, wrapping
    expect_connected(rings, 10, 300);
    expect_connected(rings, 383, 0);
}

TEST(Topology, RejectsBadInput) {
    expect_sim_error([] { Topology(TopologyKind::Ring, 0); }, {"0"});
    expect_sim_error([] { Topology(TopologyKind::FullMesh, 4097); }, {"4097"});
    const Topology ring(TopologyKind::Ring, 8);
    expect_sim_error([&] { (void)ring.route(3, 3); }, {"3", "itself"});
    expect_sim_error([&] { (void)ring.route(-1, 2); }, {"-1"});
    expect_sim_error([&] { (void)ring.route(0, 8); }, {"8"});
    expect_sim_error([&] { (void)ring.link(16); }, {"16"});
    const Topology one(TopologyKind::FullMesh, 1);
    expect_sim_error([&] { (void)one.route(0, 0); }, {"itself"});
}

}  // namespace net_test
}  // namespace tandem
