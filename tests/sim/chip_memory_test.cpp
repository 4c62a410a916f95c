// The chip's memory system (sim/mem/chip_memory.hpp, sim/mem/memory_view.hpp): L2 residency by
// region, least recently used out, with its history; what a read, a write and an atomic add cost
// the L2 and HBM; and, through whole kernels, that every consumer of a chip shares it: another
// stream's loads, and a peer's stores landing in the chip.
#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/memory_view.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/tile_loads.hpp"

namespace tandem {
namespace chip_memory_test {

// ---- residency ----

TEST(L2Residency, LeastRecentlyUsedRegionLeavesWhenFull) {
    L2Residency l2(2);
    l2.touch(10, 100);
    l2.touch(11, 200);
    l2.touch(10, 300);  // 10 is now the most recent
    l2.touch(12, 400);  // full: 11 (least recent) leaves at 400
    EXPECT_TRUE(l2.resident_at(10, 400));
    EXPECT_TRUE(l2.resident_at(12, 400));
    EXPECT_FALSE(l2.resident_at(11, 400));
    EXPECT_EQ(l2.resident_count(), 2);
}

TEST(L2Residency, AnswersForThePastWhateverHappenedSince) {
    L2Residency l2(1);
    l2.touch(1, 100);
    l2.touch(2, 200);  // 1 out at 200
    l2.touch(1, 300);  // 2 out, 1 back in at 300
    EXPECT_FALSE(l2.resident_at(1, 50));
    EXPECT_TRUE(l2.resident_at(1, 150));
    EXPECT_FALSE(l2.resident_at(1, 250));
    EXPECT_TRUE(l2.resident_at(1, 350));
    EXPECT_TRUE(l2.resident_at(2, 250));
    EXPECT_FALSE(l2.resident_at(2, 350));
    EXPECT_FALSE(l2.resident_at(99, 350));  // never touched
}

TEST(ChipMemory, RefusesAnL2SmallerThanARegion) {
    EXPECT_THROW(ChipMemory(1024, 4096), SimError);
    EXPECT_THROW(ChipMemory(1 << 20, 0), SimError);
}

TEST(ChipMemory, AnAddressIsInTheRegionItsDivisionNamesWhateverTheRegionSize) {
    // Regions of a power of two bytes are found by a shift, any other size by a division.
    for (const std::int64_t region : {std::int64_t{1} << 21, std::int64_t{3} << 20, std::int64_t{1}, std::int64_t{7}}) {
        const ChipMemory chip(std::int64_t{1} << 30, region);
        for (const std::int64_t address : {std::int64_t{0}, region - 1, region, 5 * region + 3, (std::int64_t{1} << 40) + 12345}) {
            EXPECT_EQ(chip.region_of(address), address / region) << "region " << region << " address " << address;
        }
    }
}

// A chip with one running stream that has booked at 0: it is in a kernel, so no record it has not
// looked at settles.
struct RunningChip : ::testing::Test {
    static constexpr std::int64_t kRegion = 1 << 20;
    GlobalMemory gm{0, std::int64_t{1} << 30, false};
    GmAllocation& a = gm.allocate("a", 4 * kRegion);
    const GmTensor tile = GmTensor(a, 0, 16, 1024, 1024, DType::F32);
    ChipMemory mem{64 * kRegion, kRegion};
    MemoryView running{mem, 0, 8, 1'000'000'000'000, 100'000'000'000};
    RunningChip() { running.book_local(tile, MemAccess::Read, 0, 0, 64, 1'000'000'000); }
};

TEST_F(RunningChip, KeepsEachDeliverysRecordsWithItsPublicationUntilTheySettle) {
    // Records are kept as delivered, their publication time and producer once per delivery; a
    // reader walks them from any record on, across deliveries, and stops where it wants to.
    const SimTime bin = kMemUsageBinPs;
    const std::vector<std::pair<SimTime, int>> deliveries{{1000, 3}, {2000, 5}, {2000, 6}};
    for (std::size_t d = 0; d < deliveries.size(); ++d) {
        MemTraffic t;
        for (std::size_t r = 0; r <= d + 1; ++r) {  // 2, 3 and 4 records: l2 bytes name them
            t.usage.push_back(MemUsage{3 * bin, 4 * bin, static_cast<double>(10 * d + r), 0});
        }
        mem.deliver(std::make_shared<const MemTraffic>(t), deliveries[d].first, deliveries[d].second);
    }
    mem.deliver(std::make_shared<const MemTraffic>(MemTraffic{}), 2500, 7);  // no usage: no record
    mem.forget_before(500);
    mem.sync();
    ASSERT_EQ(mem.end_index() - mem.first_index(), 9U);
    const std::vector<double> names{0, 1, 10, 11, 12, 20, 21, 22, 23};
    const std::vector<int> delivery_of{0, 0, 1, 1, 1, 2, 2, 2, 2};
    for (std::uint64_t from = 0; from <= 9; ++from) {
        std::vector<double> seen;
        const std::uint64_t stop = mem.visit_unsettled(mem.first_index() + from, mem.end_index(),
                                                       [&](const MemUsage& u, SimTime at, int source) {
            const auto d = static_cast<std::size_t>(delivery_of[from + seen.size()]);
            EXPECT_EQ(at, deliveries[d].first);
            EXPECT_EQ(source, deliveries[d].second);
            seen.push_back(u.l2_bytes);
            return true;
        });
        EXPECT_EQ(stop, mem.end_index());
        EXPECT_EQ(seen, std::vector<double>(names.begin() + static_cast<std::ptrdiff_t>(from), names.end())) << from;
    }
    // Stopping at the first record published after 1000 (a reader whose clock is at 1000).
    const std::uint64_t stop = mem.visit_unsettled(mem.first_index(), mem.end_index(),
                                                   [](const MemUsage&, SimTime at, int) { return at <= 1000; });
    EXPECT_EQ(stop, mem.first_index() + 2);
    // The view looks at what its clock reached (the first delivery), and those settle; the rest
    // wait for it, read from where they stand.
    running.book_local(tile, MemAccess::Read, 1500, 1500, 64, 1'000'000'000);
    mem.forget_before(1500);
    mem.sync();
    EXPECT_EQ(mem.end_index() - mem.first_index(), 7U);
    EXPECT_DOUBLE_EQ(mem.settled().l2.bytes_in(3), 0 + 1);
    std::vector<double> rest;
    mem.visit_unsettled(mem.first_index(), mem.end_index(), [&](const MemUsage& u, SimTime, int) {
        rest.push_back(u.l2_bytes);
        return true;
    });
    EXPECT_EQ(rest, std::vector<double>(names.begin() + 2, names.end()));
    running.book_local(tile, MemAccess::Read, 3000, 3000, 64, 1'000'000'000);
    mem.forget_before(3000);
    mem.sync();
    EXPECT_EQ(mem.end_index(), mem.first_index());
    EXPECT_DOUBLE_EQ(mem.settled().l2.bytes_in(3), 0 + 1 + 10 + 11 + 12 + 20 + 21 + 22 + 23);
}

TEST_F(RunningChip, SettlesWhatTheRunningStreamsHaveSeenAndKeepsTheTotal) {
    const SimTime bin = kMemUsageBinPs;
    MemTraffic t;
    t.usage.push_back(MemUsage{3 * bin, 4 * bin, 32, 16});
    mem.deliver(std::make_shared<const MemTraffic>(t), 1000, 7);
    mem.forget_before(1500);  // published by then, but the running view has not looked yet
    mem.sync();               // what the next window's first reader does
    EXPECT_EQ(mem.end_index() - mem.first_index(), 1U);
    running.book_local(tile, MemAccess::Read, 2000, 2000, 64, 1'000'000'000);  // looks
    EXPECT_GT(running.others_l2().rate_at(3 * bin), 0);
    mem.forget_before(2500);
    mem.sync();
    EXPECT_EQ(mem.end_index(), mem.first_index());
    EXPECT_DOUBLE_EQ(mem.settled().l2.bytes_in(3), 32);
    running.end_kernel();
    MemTraffic later;  // published after the horizon: not settled yet
    later.usage.push_back(MemUsage{3 * bin, 4 * bin, 8, 8});
    mem.deliver(std::make_shared<const MemTraffic>(later), 5000, 9);
    mem.forget_before(3000);
    mem.sync();
    EXPECT_EQ(mem.end_index() - mem.first_index(), 1U);
    // A stream that starts a kernel takes the total, then the records its clock has reached.
    MemoryView starting(mem, 0, 10, 1'000'000'000'000, 100'000'000'000);
    starting.book_local(tile, MemAccess::Read, 4000, 4000, 64, 1'000'000'000);
    const std::int64_t before = starting.others_l2().rate_at(3 * bin);
    EXPECT_GT(before, 0);
    starting.book_local(tile, MemAccess::Read, 6000, 6000, 64, 1'000'000'000);
    EXPECT_GE(starting.others_l2().rate_at(3 * bin), before);
    mem.forget_before(3 * bin);  // bins before 3 are history
    mem.sync();
    EXPECT_DOUBLE_EQ(mem.settled().l2.bytes_in(0), 0);
}

// The barriers only queue; the next window's first reader applies the queue. Applying after
// every barrier, or once after several in which no stream of the chip moved, must give the same
// chip: the same records, settled total and residency.
TEST(ChipMemory, ApplyingSeveralBarriersAtOnceGivesWhatApplyingEachGives) {
    static constexpr std::int64_t kRegion = 1 << 20;
    GlobalMemory gm{0, std::int64_t{1} << 30, false};
    GmAllocation& a = gm.allocate("a", 4 * kRegion);
    const GmTensor tile(a, 0, 16, 1024, 1024, DType::F32);
    const SimTime bin = kMemUsageBinPs;
    ChipMemory each(4 * kRegion, kRegion);
    ChipMemory once(4 * kRegion, kRegion);
    // A running view on each chip that has looked at nothing yet, so the first records wait.
    MemoryView view_each(each, 0, 8, 1'000'000'000'000, 100'000'000'000);
    MemoryView view_once(once, 0, 8, 1'000'000'000'000, 100'000'000'000);
    view_each.book_local(tile, MemAccess::Read, 0, 0, 64, 1'000'000'000);
    view_once.book_local(tile, MemAccess::Read, 0, 0, 64, 1'000'000'000);
    for (int barrier = 1; barrier <= 8; ++barrier) {
        auto t = std::make_shared<MemTraffic>();
        t->usage.push_back(MemUsage{barrier * bin, (barrier + 3) * bin, 100.0 * barrier, 10.0 * barrier, false});
        t->usage.push_back(MemUsage{barrier * bin, (barrier + 2) * bin, 7.0, 0, true});
        t->touched_regions = {RegionTouch{barrier % 6}, RegionTouch{(barrier * 5) % 6}};  // 6 regions through an L2 of 4
        const SimTime at = barrier * bin - bin / 4;
        for (ChipMemory* c : {&each, &once}) {
            c->deliver(t, at, barrier % 3);
            c->forget_before(at - bin / 2);
        }
        each.sync();
        if (barrier == 4) {
            // The views look once, in the same window on both chips (after their sync).
            view_each.book_local(tile, MemAccess::Read, at, at, 64, 1'000'000'000);
            view_once.book_local(tile, MemAccess::Read, at, at, 64, 1'000'000'000);
        }
    }
    once.sync();
    EXPECT_EQ(each.first_index(), once.first_index());
    EXPECT_EQ(each.end_index(), once.end_index());
    EXPECT_GT(each.first_index(), 0U);  // some were settled
    EXPECT_GT(each.end_index(), each.first_index());  // and some wait for the view
    for (std::int64_t b = 0; b < 16; ++b) {
        EXPECT_EQ(each.settled().l2.bytes_in(b), once.settled().l2.bytes_in(b)) << "bin " << b;
        EXPECT_EQ(each.settled().hbm.bytes_in(b), once.settled().hbm.bytes_in(b)) << "bin " << b;
    }
    for (std::int64_t r = 0; r < 6; ++r) {
        for (SimTime t = 0; t < 10 * bin; t += bin / 2)
            EXPECT_EQ(each.residency().resident_at(r, t), once.residency().resident_at(r, t)) << "region " << r;
    }
}

TEST(BinnedUsage, SpreadsBytesOverBinsAndReadsASumAsARate) {
    const SimTime bin = from_us(1);
    BinnedUsage a(bin);
    a.add(from_us(0.5), from_us(2.5), 200);  // 50 + 100 + 50
    EXPECT_DOUBLE_EQ(a.bytes_in(0), 50);
    EXPECT_DOUBLE_EQ(a.bytes_in(1), 100);
    EXPECT_DOUBLE_EQ(a.bytes_in(2), 50);
    BinnedUsage b(bin);
    b.add(from_us(1), from_us(2), 40);
    UsageSum sum(1'000'000);  // steps of 1 MB/s
    sum.plus(&a).minus(&b);
    EXPECT_EQ(sum.rate_at(from_us(1.5)), 60'000'000);  // 60 bytes in a microsecond
    EXPECT_EQ(sum.next_change(from_us(1.5)), from_us(2));
    EXPECT_EQ(sum.next_change(from_us(3.5)), kNever);  // past every bin with bytes
    EXPECT_EQ(sum.rate_at(from_us(3.5)), 0);
    a.forget_before(from_us(1.2));  // bin 0 is history, bin 1 still read
    EXPECT_DOUBLE_EQ(a.bytes_in(0), 0);
    EXPECT_DOUBLE_EQ(a.bytes_in(1), 100);
    a.add(0, from_us(0.5), 10);  // before the horizon: dropped
    EXPECT_DOUBLE_EQ(a.bytes_in(0), 0);
    BinnedUsage other_bins(from_us(2));
    other_bins.add(0, from_us(1), 1);
    EXPECT_THROW(sum.plus(&other_bins), SimError);
}

// Usage booked far ahead and scattered (a comm block's stores into 63 peers in turn) costs the
// pages its bytes land in, not the span between them; a walk skips the gaps.
TEST(BinnedUsage, KeepsOnlyThePagesItsBytesLandIn) {
    const SimTime bin = kMemUsageBinPs;
    BinnedUsage u(bin);
    u.add(3 * bin, 5 * bin, 20);                          // bins 3 and 4
    u.add(1'000'000 * bin, 1'000'001 * bin, 7);           // bin 1,000,000
    EXPECT_EQ(u.pages_held(), 2U);
    EXPECT_DOUBLE_EQ(u.bytes_in(4), 10);
    EXPECT_DOUBLE_EQ(u.bytes_in(500'000), 0);
    EXPECT_DOUBLE_EQ(u.bytes_in(1'000'000), 7);
    EXPECT_EQ(u.first_bin(), 3);
    EXPECT_EQ(u.end_bin(), 1'000'001);
    std::vector<std::int64_t> walked;
    for (std::int64_t b = u.next_kept_bin(u.first_bin()); b < u.end_bin(); b = u.next_kept_bin(b + 1)) {
        if (u.bytes_in(b) > 0) walked.push_back(b);
    }
    EXPECT_EQ(walked, (std::vector<std::int64_t>{3, 4, 1'000'000}));
    u.forget_before(10 * bin);  // bins 3 and 4 are history; their page holds the horizon's bin
    EXPECT_EQ(u.pages_held(), 2U);
    EXPECT_DOUBLE_EQ(u.bytes_in(4), 0);
    EXPECT_EQ(u.first_bin(), 10);
    u.forget_before(100 * bin);  // now the first page is history
    EXPECT_EQ(u.pages_held(), 1U);
    EXPECT_EQ(u.first_bin(), 100);
    const BinnedUsage copy = u;
    EXPECT_DOUBLE_EQ(copy.bytes_in(1'000'000), 7);
    u.forget_before(2'000'000 * bin);
    EXPECT_TRUE(u.empty());
    EXPECT_EQ(u.pages_held(), 0U);
    EXPECT_DOUBLE_EQ(copy.bytes_in(1'000'000), 7);  // a deep copy
}

// The pages change where bins are kept, not a sum: every bin holds what adding bin by bin, in
// the same order, gives, over random spans, runs and horizons.
TEST(BinnedUsage, EveryBinHoldsTheSumOfItsAddsInOrder) {
    const SimTime bin = kMemUsageBinPs;
    BinnedUsage u(bin);
    std::vector<double> ref(4096, 0.0);
    std::int64_t horizon = 0;
    std::uint64_t x = 12345;
    const auto next = [&x](std::uint64_t n) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        return (x >> 33) % n;
    };
    for (int i = 0; i < 3000; ++i) {
        const auto first = static_cast<std::int64_t>(next(3900));
        const auto len = static_cast<std::int64_t>(1 + next(i % 3 == 0 ? 150 : 4));
        const double bytes = 1.0 + static_cast<double>(next(1000)) / 7.0;
        if (i % 2 == 0) {
            const SimTime start = first * bin + static_cast<SimTime>(next(static_cast<std::uint64_t>(bin)));
            const SimTime end = start + len * bin - static_cast<SimTime>(next(static_cast<std::uint64_t>(bin)));
            u.add(start, end, bytes);
            BinnedUsage one(bin);  // the same span alone: what it puts in each bin
            one.add(start, end, bytes);
            for (std::int64_t b = one.first_bin(); b < one.end_bin(); ++b) {
                if (b >= horizon) ref[static_cast<std::size_t>(b)] += one.bytes_in(b);
            }
        } else {
            u.add_to_bins(first, first + len, bytes);
            for (std::int64_t b = std::max(first, horizon); b < first + len; ++b) ref[static_cast<std::size_t>(b)] += bytes;
        }
        if (i % 500 == 499) {
            horizon += 300;
            u.forget_before(horizon * bin);
        }
        if (i % 97 == 0) {
            for (std::int64_t b = horizon; b < 4096; ++b) ASSERT_EQ(u.bytes_in(b), ref[static_cast<std::size_t>(b)]) << "bin " << b;
        }
    }
}

// ---- one stream's view ----

struct ViewFixture {
    static constexpr std::int64_t kRegion = 1 << 20;
    GlobalMemory gm{0, std::int64_t{1} << 30, false};
    ChipMemory chip{64 * kRegion, kRegion};
    // 1 TB/s of L2, 100 GB/s of HBM (bytes per second).
    MemoryView view{chip, 0, 0, 1'000'000'000'000, 100'000'000'000};
    GmAllocation& a = gm.allocate("a", 4 * kRegion);
    GmTensor tile(int row0) const { return GmTensor(a, std::int64_t{row0} * 1024 * 4, 256, 1024, 1024, DType::F32); }
};

TEST(MemoryView, AFirstReadComesFromHbmTheNextFromL2) {
    ViewFixture f;
    const std::int64_t cap = 500'000'000'000;  // the core's own rate: 0.5 TB/s
    const double bytes = 1 << 20;
    const SimTime miss = f.view.book_local(f.tile(0), MemAccess::Read, 0, 0, bytes, cap);
    EXPECT_DOUBLE_EQ(f.view.hbm_read_bytes(), bytes);
    // Bound by HBM's 100 GB/s: about 10.5 us.
    EXPECT_NEAR(to_us(miss), bytes / 100e9 * 1e6, 0.01);
    const SimTime hit = f.view.book_local(f.tile(0), MemAccess::Read, miss, miss, bytes, cap) - miss;
    EXPECT_DOUBLE_EQ(f.view.l2_hit_bytes(), bytes);
    EXPECT_NEAR(to_us(hit), bytes / 500e9 * 1e6, 0.01);  // the core's rate: the L2 has room
}

// A 16-column band of a 1024-wide fp32 matrix (64 B of each 4 KiB row), rows [row0, row0 + rows).
GmTensor column_band(const GmAllocation& a, int row0, int rows, int band) {
    return GmTensor(a, std::int64_t{row0} * 4096 + band * 64, rows, 16, 1024, DType::F32);
}

TEST(MemoryView, AColumnBandOfAWideMatrixBringsOnlyItsOwnColumnsIn) {
    // 256 rows x 64 B: the band of a 1 MiB region's rows. The band beside it shares the region's
    // rows but not its bytes: its first read comes from HBM too, then each reads from the L2.
    ViewFixture f;
    const std::int64_t cap = 500'000'000'000;
    const double bytes = 256 * 64;
    SimTime t = 0;
    for (int band : {3, 4}) {
        t = f.view.book_local(column_band(f.a, 0, 256, band), MemAccess::Read, t, t, bytes, cap);
        EXPECT_DOUBLE_EQ(f.view.l2_hit_bytes(), 0) << "band " << band;
    }
    EXPECT_DOUBLE_EQ(f.view.hbm_read_bytes(), 2 * bytes);
    for (int band : {3, 4}) t = f.view.book_local(column_band(f.a, 0, 256, band), MemAccess::Read, t, t, bytes, cap);
    EXPECT_DOUBLE_EQ(f.view.l2_hit_bytes(), 2 * bytes);
    EXPECT_DOUBLE_EQ(f.view.hbm_read_bytes(), 2 * bytes);
}

TEST(MemoryView, APanelThatEndsInARegionLeavesTheRestOfItsRowsOut) {
    // Rows [0, 128) of a band and then rows [128, 256): the same region (1 MiB = 256 rows of 4
    // KiB), another half of it. The second comes from HBM; whole rows read later are a hit only
    // where the two panels were.
    ViewFixture f;
    const std::int64_t cap = 500'000'000'000;
    const double half = 128 * 64;
    SimTime t = f.view.book_local(column_band(f.a, 0, 128, 0), MemAccess::Read, 0, 0, half, cap);
    t = f.view.book_local(column_band(f.a, 128, 128, 0), MemAccess::Read, t, t, half, cap);
    EXPECT_DOUBLE_EQ(f.view.l2_hit_bytes(), 0);
    EXPECT_DOUBLE_EQ(f.view.hbm_read_bytes(), 2 * half);
    t = f.view.book_local(column_band(f.a, 0, 256, 0), MemAccess::Read, t, t, 2 * half, cap);
    EXPECT_DOUBLE_EQ(f.view.l2_hit_bytes(), 2 * half);
}

TEST(L2Residency, KeepsTheCellsOfARegionThatWereTouched) {
    L2Residency l2(4);
    const RegionPart band3{BandMask{1} << 3, 0, kRegionSlices};
    const RegionPart lower_half{kAllBands, 0, kRegionSlices / 2};
    l2.touch(7, band3, 100);
    EXPECT_EQ(band3.count_in(*l2.resident_cells(7, 100).cells), band3.cell_count());
    EXPECT_EQ((RegionPart{BandMask{1} << 4, 0, kRegionSlices}.count_in(*l2.resident_cells(7, 100).cells)), 0);
    EXPECT_FALSE(l2.resident_at(7, 100));  // only a band of it
    l2.touch(8, lower_half, 200);
    EXPECT_EQ((RegionPart{kAllBands, kRegionSlices / 2, kRegionSlices}.count_in(*l2.resident_cells(8, 200).cells)), 0);
    l2.touch(8, RegionPart{kAllBands, kRegionSlices / 2, kRegionSlices}, 300);
    EXPECT_TRUE(l2.resident_at(8, 300));  // both halves: all of it
}

TEST(MemoryView, AnAtomicAddUsesTheL2TwiceAndAWriteIsWrittenBack) {
    ViewFixture f;
    const double bytes = 1 << 20;
    const SimTime end = f.view.book_local(f.tile(0), MemAccess::AtomicAdd, 0, 0, bytes, 200'000'000'000);
    EXPECT_NEAR(to_us(end), bytes / 200e9 * 1e6, 0.01);  // at the core's rate, not slower
    std::vector<MemoryView::ChipTraffic> taken;
    f.view.take_traffic(taken);
    ASSERT_EQ(taken.size(), 1U);
    ASSERT_EQ(taken[0].rank, 0);
    const MemTraffic& traffic = *taken[0].traffic;
    // Published in bins of kMemUsageBinPs over the add's 5.2 us, as runs of equal bins: the whole
    // bins (the add starts at 0) are one run, the partial last bin another.
    SimTime bins = 0;
    double l2 = 0;
    double hbm = 0;
    for (const MemUsage& u : traffic.usage) {
        ASSERT_TRUE(u.per_bin);
        EXPECT_EQ(u.start, bins * kMemUsageBinPs);  // in order, without gaps
        const SimTime run = (u.end - u.start) / kMemUsageBinPs;
        bins += run;
        l2 += u.l2_bytes * static_cast<double>(run);
        hbm += u.hbm_bytes * static_cast<double>(run);
    }
    EXPECT_EQ(bins, (end + kMemUsageBinPs - 1) / kMemUsageBinPs);
    EXPECT_EQ(traffic.usage.size(), end % kMemUsageBinPs == 0 ? 1U : 2U);
    EXPECT_NEAR(l2, 2 * bytes, 1e-6);  // read and written in the L2
    EXPECT_NEAR(hbm, bytes, 1e-6);     // written back once
    // The regions the tile spans (allocations start 4 KiB past a region boundary).
    const GmTensor t = f.tile(0);
    const auto spanned = f.chip.region_of(t.address() + t.bytes() - 1) - f.chip.region_of(t.address()) + 1;
    EXPECT_EQ(static_cast<std::int64_t>(traffic.touched_regions.size()), spanned);
    // The write-back takes HBM bandwidth without holding the store up: the calendar has it.
    EXPECT_GT(f.view.others_hbm().rate_at(end / 2), 0);
}

TEST(MemoryView, OtherProducersUsageCountsFromItsPublicationOn) {
    ViewFixture f;
    // Another stream (source 1) used all of the L2 over [0, 100 us), published at 1 us.
    MemTraffic other;
    other.usage.push_back(MemUsage{0, from_us(100), 1e12 * 100e-6, 0});
    f.chip.deliver(std::make_shared<const MemTraffic>(other), from_us(1), 1);
    // ... and made `a` resident.
    f.chip.deliver(std::make_shared<const MemTraffic>(
                       MemTraffic{{}, {RegionTouch{f.chip.region_of(f.a.base)}, RegionTouch{f.chip.region_of(f.a.base) + 1}}}),
                   from_us(1), 1);
    const double bytes = 1 << 20;
    // Issued before the publication: this stream does not know yet. The L2 looks free and `a`
    // not resident: a miss, at HBM's rate (10.5 us), not held to 100 us.
    const SimTime early = f.view.book_local(f.tile(0), MemAccess::Read, from_us(0.5), from_us(2), bytes, 500'000'000'000);
    EXPECT_NEAR(to_us(early), 2 + bytes / 100e9 * 1e6, 0.01);
    // Issued after it: the L2 is full until 100 us.
    const SimTime late = f.view.book_local(f.tile(0), MemAccess::Read, from_us(2), from_us(20), bytes, 500'000'000'000);
    EXPECT_GE(late, from_us(100));
}

// ---- whole kernels ----

// The probes' tiles: 128 x 128 fp32 (64 KiB), 32 per block (tests/support/tile_loads.hpp).
constexpr int rows = test::kLoadRows;
constexpr int cols = test::kLoadCols;
constexpr int tiles = test::kLoadTiles;
using test::narrow_l2_profile;

// `heavy` AIV blocks of stream "loads" each load `tiles` 64 KiB tiles from their own rows of a
// shared buffer; alone, or beside a one-block kernel on stream "probe" doing the same. Returns the
// probe kernel's device time.
double probe_us(const Profile& p, int heavy_blocks) {
    Runtime rt(p, ClusterOptions{1, DataMode::TimingOnly, false});
    double probe = 0;
    rt.run_hosts([&](HostContext& host) {
        GmAllocation& buf = host.malloc("buf", std::int64_t{rows} * cols * 4 * tiles * 49);
        auto loader = [&buf](int base_tile) { return test::tile_loader(buf, base_tile); };
        Stream& loads = host.create_stream("loads");
        Stream& probe_stream = host.create_stream("probe");
        if (heavy_blocks > 0) loads.launch(KernelLaunch{"Loads", CoreType::AIV, heavy_blocks, loader(1)});
        probe_stream.launch(KernelLaunch{"Probe", CoreType::AIV, 1, loader(0)});
        probe_stream.synchronize();
        if (heavy_blocks > 0) loads.synchronize();
        const KernelStats& s = probe_stream.kernel_stats().back();
        probe = to_us(s.end - s.start);
    });
    return probe;
}

TEST(SharedMemory, AnotherStreamsLoadsSlowThisOnesDown) {
    const Profile p = narrow_l2_profile();
    const double alone = probe_us(p, 0);
    const double shared = probe_us(p, 47);
    EXPECT_GT(shared, alone * 1.5) << "alone " << alone << " us, beside 47 loading blocks " << shared << " us";
    EXPECT_EQ(probe_us(p, 47), shared);  // deterministic
}

TEST(SharedMemory, WithTheShippedL2TheSameLoadsDoNotContend) {
    const Profile p = test::b1_profile();
    const double alone = probe_us(p, 0);
    EXPECT_NEAR(probe_us(p, 47), alone, alone * 0.2);
}

// Rank 1's blocks store into rank 0's window while rank 0's probe loads: the stores land in rank
// 0's memory and take their share of its L2.
double probe_with_incoming_us(const Profile& p, bool incoming, bool atomic) {
    Runtime rt(p, ClusterOptions{2, DataMode::TimingOnly, false});
    double probe = 0;
    GmAllocation* window = nullptr;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() == 0) {
            window = &host.cluster().chip(0).gm.allocate("window", std::int64_t{rows} * cols * 4 * 48, true);
        }
        GmAllocation& buf = host.malloc("buf", std::int64_t{rows} * cols * 4 * tiles * 48);
        host.barrier();
        if (host.rank() == 1) {
            if (!incoming) return;
            Stream& s = host.create_stream("senders");
            s.launch(KernelLaunch{"Senders", CoreType::AIV, 48, [&, atomic](BlockCtx& b) -> Task {
                                      Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "ub");
                                      const GmTensor dst(*window, std::int64_t{b.block_idx()} * rows * cols * 4, rows, cols,
                                                         cols, DType::F32);
                                      for (int t = 0; t < tiles; ++t) {
                                          co_await TSTORE(dst, ub, atomic ? AtomicType::AtomicAdd : AtomicType::None);
                                          pipe_barrier(b, PIPE_ALL);
                                      }
                                  }});
            s.synchronize();
            return;
        }
        Stream& s = host.create_stream("probe");
        s.launch(KernelLaunch{"Probe", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                                  Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "ub");
                                  for (int t = 0; t < tiles; ++t) {
                                      co_await TLOAD(ub, GmTensor(buf, std::int64_t{t} * rows * cols * 4, rows, cols, cols,
                                                                  DType::F32));
                                      pipe_barrier(b, PIPE_ALL);
                                  }
                              }});
        s.synchronize();
        const KernelStats& st = s.kernel_stats().back();
        probe = to_us(st.end - st.start);
    });
    return probe;
}

TEST(SharedMemory, PeersStoresLandingInAChipTakeItsL2) {
    Profile p = test::b1_profile();
    // An L2 of 150 GiB/s: the probe's 100.9 GiB/s fit beside a peer's stores at the link's
    // 93 GiB/s only in part, and not at all beside its atomic adds (twice that).
    p.chip.l2_gib_s = 150;
    p.interconnect.link_gb_s = 100;
    p.interconnect.remote_store_gib_s = 50;
    const double alone = probe_with_incoming_us(p, false, false);
    const double with_stores = probe_with_incoming_us(p, true, false);
    const double with_adds = probe_with_incoming_us(p, true, true);
    EXPECT_GT(with_stores, alone * 1.2) << alone << " " << with_stores;
    // An atomic add reads and writes the L2: twice a store's share.
    EXPECT_GT(with_adds, with_stores * 1.1) << with_stores << " " << with_adds;
}

}  // namespace chip_memory_test
}  // namespace tandem
