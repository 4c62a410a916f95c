// A directed link is shared by every stream that sends over it (sim/net/link_hub.hpp): on a
// ring, two ranks whose routes cross the same hop split its bandwidth; routes that do not cross
// it are not slowed. The hub's unit behaviour: what a stream reads is the others' usage, exactly
// zero where there is none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "sim/isa/isa.hpp"
#include "sim/net/link_hub.hpp"
#include "sim/net/link_view.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace link_sharing_test {

constexpr int kRanks = 4;
constexpr int kTarget = 2;
constexpr int kBlocks = 8;
constexpr int kTileRows = 128, kTileCols = 256;  // 64 KiB of fp16
constexpr int kTilesPerBlock = 16;
constexpr std::int64_t kTileBytes = std::int64_t{kTileRows} * kTileCols * 2;
constexpr std::int64_t kBytesPerRank = kTileBytes * kTilesPerBlock * kBlocks;  // 8 MiB

// Hands `usage` to `hub` as a window that booked only it would (one message of one record).
void deliver_one(LinkHub& hub, const LinkUsage& usage, int source, SimTime horizon) {
    auto traffic = std::make_shared<LinkTraffic>();
    traffic->usage.push_back(usage);
    traffic->links.push_back(LinkTraffic::Records{0, 0, 1});
    hub.deliver(traffic, traffic->links.front(), source, horizon);
}

Profile ring_profile() {
    Profile p = test::b1_profile();
    p.interconnect.topology = TopologyKind::Ring;
    return p;
}

// Each sending rank's stream stores kBytesPerRank into rank 2's window over kBlocks blocks, all
// tiles back to back. A sender in `late` first runs a kernel of one local load on the same
// stream, so that its stores are booked once the others' are known (bookings made in one
// window do not see each other: sim/net/link_hub.hpp).
struct SendResult {
    std::vector<SimTime> end;  // per rank: the end of its sending kernel (0: did not send)
    std::map<int, LinkSteps> links;
};

SendResult send_to_target(const std::vector<int>& senders, const std::vector<int>& late) {
    Runtime rt(ring_profile(), ClusterOptions{kRanks, DataMode::TimingOnly, true});
    GmAllocation& window = rt.cluster().chip(kTarget).gm.allocate("window", kBytesPerRank * kRanks, /*shared=*/true);
    std::vector<GmAllocation*> src(kRanks);
    for (int r = 0; r < kRanks; ++r) src[static_cast<std::size_t>(r)] = &rt.cluster().chip(r).gm.allocate("src", 4 * kTileBytes);
    SendResult out;
    out.end.assign(kRanks, 0);
    rt.run_hosts([&](HostContext& host) {
        const int r = host.rank();
        if (std::find(senders.begin(), senders.end(), r) == senders.end()) return;
        Stream& s = host.create_stream("comm");
        GmAllocation& mine = *src[static_cast<std::size_t>(r)];
        if (std::find(late.begin(), late.end(), r) != late.end()) {
            s.launch(KernelLaunch{"delay", CoreType::AIV, 1, [&mine](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, kTileRows, kTileCols, DType::F16, "ub");
                co_await TLOAD(ub, GmTensor(mine, 0, kTileRows, kTileCols, kTileCols, DType::F16));
            }});
        }
        s.launch(KernelLaunch{"send", CoreType::AIV, kBlocks, [&mine, &window, r](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, kTileRows, kTileCols, DType::F16, "ub");
            co_await TLOAD(ub, GmTensor(mine, 0, kTileRows, kTileCols, kTileCols, DType::F16));
            pipe_barrier(b, PIPE_ALL);
            for (int t = 0; t < kTilesPerBlock; ++t) {
                const std::int64_t offset = r * kBytesPerRank + (std::int64_t{b.block_idx()} * kTilesPerBlock + t) * kTileBytes;
                co_await TSTORE(GmTensor(window, offset, kTileRows, kTileCols, kTileCols, DType::F16), ub);
            }
        }});
        s.synchronize();
        out.end[static_cast<std::size_t>(r)] = s.kernel_stats().back().end;
    });
    out.links = rt.cluster().link_usage();
    return out;
}

double link_bytes_per_s() { return ring_profile().interconnect.link_gb_s * 1e9; }
double us(SimTime t) { return static_cast<double>(t) / 1e6; }

TEST(LinkSharing, TwoRanksCrossingOneHopSplitIt) {
    // Alone, rank 0 (route 0 -> 1 -> 2) is bound by its link: 8 MiB at link_gb_s.
    const double alone_us = kBytesPerRank / link_bytes_per_s() * 1e6;
    const SendResult solo = send_to_target({0}, {});
    EXPECT_GT(us(solo.end[0]), alone_us);
    EXPECT_LT(us(solo.end[0]), 1.1 * alone_us);
    // Rank 1 (route 1 -> 2) starts once rank 0's stores are booked: the hop 1 -> 2 carries both
    // ranks' 16 MiB, so rank 1 cannot end before 16 MiB have crossed it.
    const SendResult both = send_to_target({0, 1}, {1});
    EXPECT_LT(us(both.end[0]), 1.1 * alone_us) << "booked first, it keeps its share";
    EXPECT_GT(us(both.end[1]), 0.95 * 2 * alone_us);
    // Summed over the streams, the shared hop carries no more than it can, but for what the
    // others learn of per bin of kLinkUsageBinPs: where a transfer ends inside a bin, its bin
    // averages it, and a booking beside it may overlap the rest of the bin.
    const Topology ring(TopologyKind::Ring, kRanks);
    const int hop = ring.route(1, kTarget)[0];
    const LinkSteps& steps = both.links.at(hop);
    double over_bytes = 0;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        const double excess = static_cast<double>(steps[i].second) - link_bytes_per_s();
        if (excess > 0) over_bytes += excess * static_cast<double>(steps[i + 1].first - steps[i].first) * 1e-12;
    }
    EXPECT_LT(over_bytes, 1e-3 * 2 * kBytesPerRank);
}

TEST(LinkSharing, RoutesThatDoNotCrossAHopAreNotSlowedByIt) {
    // Rank 3 reaches rank 2 over 3 -> 2, which rank 0's route does not cross.
    const SendResult solo = send_to_target({3}, {3});
    const SendResult both = send_to_target({0, 3}, {3});
    EXPECT_EQ(both.end[3], solo.end[3]);
}

// A booking at `rates` (book_transfer's rate steps) until `end`.
void booked(LinkView& view, std::vector<Breakpoint> rates, SimTime end) { view.note_booked(rates, end); }

void hand_in(LinkHub& hub, LinkView& view, int source) {
    auto traffic = std::make_shared<LinkTraffic>();
    view.take_usage(0, traffic);
    for (const LinkTraffic::Records& r : traffic->links) hub.deliver(traffic, r, source, 0);
}

TEST(LinkSharing, AStreamReadsExactlyTheOthersUsage) {
    LinkHub hub;
    LinkView first(hub, "link 0->1", 18'250'000'000, /*source=*/1);
    LinkView second(hub, "link 0->1", 18'250'000'000, /*source=*/2);
    EXPECT_EQ(first.others().max_rate(), 0) << "nobody has handed anything in";
    // The first stream's usage alone: nothing from the others, even once handed in.
    booked(first, {{0, 3'333'333'333}}, 3000 * kPsPerNs);
    booked(first, {{200 * kPsPerNs, 1'000'000'000}, {900 * kPsPerNs, 4'381'587'321}}, 2500 * kPsPerNs);
    hand_in(hub, first, 1);
    for (SimTime t = 0; t < 4000 * kPsPerNs; t += 100 * kPsPerNs) EXPECT_EQ(first.others().rate_at(t), 0) << t;
    // A second stream's, in bins of its own and in the first's: each reads the other's bytes per
    // bin, at the rate step's resolution, and none of its own, exactly.
    booked(second, {{1000 * kPsPerNs, 10'000'000'000}}, 1500 * kPsPerNs);  // 5000 bytes
    booked(second, {{6000 * kPsPerNs, 476'190'476}}, 9000 * kPsPerNs);
    booked(second, {{6100 * kPsPerNs, 0}, {6300 * kPsPerNs, 1'943'000'000}}, 8000 * kPsPerNs);
    hand_in(hub, second, 2);
    const auto step_rate = [](double bytes_per_bin) {
        return static_cast<std::int64_t>(bytes_per_bin / 500e-9 / kLinkUsageRateStep + 0.5) * kLinkUsageRateStep;
    };
    EXPECT_EQ(first.others().rate_at(1200 * kPsPerNs), step_rate(5000.0));
    EXPECT_EQ(first.others().rate_at(200 * kPsPerNs), 0);
    EXPECT_GT(second.others().rate_at(200 * kPsPerNs), 0);
    for (SimTime t = 6000 * kPsPerNs; t < 9000 * kPsPerNs; t += 100 * kPsPerNs) {
        EXPECT_EQ(second.others().rate_at(t), 0) << t;
        EXPECT_GT(first.others().rate_at(t), 0) << t;
    }
}

TEST(LinkSharing, TheFirstStreamsUsageBinnedWhenFirstReadHoldsWhatBinningAtOnceHolds) {
    // The hub keeps the first stream's usage as records until another stream reads it: the bins
    // it then makes hold, from the horizon on, the same sums as adding each record when it was
    // delivered, forgetting as the barriers forgot.
    LinkHub hub;
    BinnedUsage eager(kLinkUsageBinPs);
    std::mt19937_64 rng(20261206);
    SimTime horizon = 0;
    const auto deliver = [&](int n) {
        for (int i = 0; i < n; ++i) {
            horizon += static_cast<SimTime>(rng() % 3) * 400 * kPsPerNs;
            const SimTime start = horizon + static_cast<SimTime>(rng() % 200'000) * 100;  // up to 20 us ahead
            const LinkUsage u{start, start + 1 + static_cast<SimTime>(rng() % 40'000'000), 1.0 + static_cast<double>(rng() % 100'000)};
            deliver_one(hub, u, /*source=*/1, horizon);
            eager.forget_before(horizon);
            eager.add(u.start, u.end, u.bytes);
            if (i % 37 == 0) {
                hub.forget_before(horizon);
                eager.forget_before(horizon);
            }
        }
    };
    const auto same_from_horizon = [&] {
        const BinnedUsage& lazy = hub.first_usage();
        for (std::int64_t b = horizon / kLinkUsageBinPs; b < eager.end_bin() + 2; ++b) {
            ASSERT_EQ(lazy.bytes_in(b), eager.bytes_in(b)) << "bin " << b;
        }
    };
    deliver(600);
    same_from_horizon();
    deliver(300);  // binned from now on, as delivered
    same_from_horizon();
}

TEST(LinkSharing, AnIdleLinksNextSenderBecomesItsFirst) {
    // An op's views run their kernels on different streams one after another: once everything
    // the first stream handed in lies before the horizon, the next stream to hand usage in is
    // the link's first (it keeps no copy of its own usage), and what each reads is unchanged.
    LinkHub hub;
    constexpr SimTime kUs = 1000 * kPsPerNs;
    deliver_one(hub, LinkUsage{0, 10 * kUs, 1.0e5}, /*source=*/1, 0);
    EXPECT_EQ(hub.first_source(), 1);
    deliver_one(hub, LinkUsage{5 * kUs, 12 * kUs, 2.0e5}, /*source=*/2, 4 * kUs);  // overlaps: not idle
    EXPECT_EQ(hub.first_source(), 1);
    EXPECT_GT(hub.rest_usage().bytes_in(11 * kUs / kLinkUsageBinPs), 0.0);
    // At 12 us nothing delivered reaches the horizon's bin: source 3 is the first from now on.
    deliver_one(hub, LinkUsage{20 * kUs, 30 * kUs, 3.0e5}, /*source=*/3, 12 * kUs);
    EXPECT_EQ(hub.first_source(), 3);
    EXPECT_TRUE(hub.rest_usage().empty());
    deliver_one(hub, LinkUsage{25 * kUs, 26 * kUs, 4.0e4}, /*source=*/1, 13 * kUs);
    EXPECT_EQ(hub.first_source(), 3);
    const std::int64_t bin = 25 * kUs / kLinkUsageBinPs;
    EXPECT_EQ(hub.rest_usage().bytes_in(bin), 2.0e4);  // source 1's: 40 KB over two bins
    EXPECT_EQ(hub.first_usage().bytes_in(bin), 3.0e5 / 20);  // source 3's: 300 KB over 20 bins
    // A usage that ends inside the horizon's bin still counts: not idle.
    LinkHub busy;
    deliver_one(busy, LinkUsage{0, 12 * kUs + 1, 1.0e5}, /*source=*/1, 0);
    deliver_one(busy, LinkUsage{20 * kUs, 21 * kUs, 1.0e5}, /*source=*/2, 12 * kUs);
    EXPECT_EQ(busy.first_source(), 1);
}

}  // namespace link_sharing_test
}  // namespace tandem
