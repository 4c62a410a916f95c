// The binned bandwidth calendar (sim/net/binned_calendar.hpp), a chip's L2 and HBM: a transfer
// takes, bin after bin, min(its cap, what the bin has left on every resource of its path, less
// the background beside it). Expected times are worked out by hand in the comments: 1 GB/s =
// 1e9 bytes/s moves 1 byte per 1000 ps; bins here are 1 ns (1000 ps) unless said otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/net/binned_calendar.hpp"
#include "sim/share/binned_usage.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/calendar_checks.hpp"

namespace tandem {
namespace binned_calendar_test {

constexpr std::int64_t kGBps = 1000 * 1000 * 1000;
constexpr SimTime kBin = 1000;  // 1 ns

SimTime book(std::initializer_list<BinnedCalendar*> path, SimTime start, double bytes, std::int64_t cap) {
    const std::vector<BinnedCalendar*> hops(path);
    return book_binned(hops, start, bytes, cap);
}


TEST(BinnedCalendar, LoneTransferRunsAtItsCapAndEndsExactly) {
    BinnedCalendar l2("l2", 100 * kGBps, kBin);
    // 1000 bytes at 30 GB/s from 250 ps: 33,333.3 ps, rounded up -> 33,584 ps. Uncontended, the
    // bins do not show: the end is where an exact calendar puts it.
    EXPECT_EQ(book({&l2}, 250, 1000, 30 * kGBps), 250 + 33334);
    // Its bytes are in the bins it spanned: 30 bytes per whole ns, 22.5 in the first (750 ps).
    EXPECT_DOUBLE_EQ(l2.bytes_in(0), 22.5);
    EXPECT_DOUBLE_EQ(l2.bytes_in(1), 30.0);
    EXPECT_DOUBLE_EQ(l2.bytes_booked(), 1000.0);
}

TEST(BinnedCalendar, CapAboveCapacityIsLimitedByCapacity) {
    BinnedCalendar l2("l2", 10 * kGBps, kBin);
    EXPECT_EQ(book({&l2}, 0, 1000, 40 * kGBps), 100 * kBin);  // 10 bytes per ns
}

TEST(BinnedCalendar, LaterTransferTakesWhatIsLeftInEachBin) {
    BinnedCalendar l2("l2", 100 * kGBps, kBin);
    // First: 60 GB/s for 10 ns (600 bytes). Second, booked after it from 0: 40 bytes per ns
    // while the first runs (400 bytes by 10 ns), then its cap of 80: 400 more take 5 ns -> 15 ns.
    EXPECT_EQ(book({&l2}, 0, 600, 60 * kGBps), 10 * kBin);
    EXPECT_EQ(book({&l2}, 0, 800, 80 * kGBps), 15 * kBin);
}

TEST(BinnedCalendar, BytesInABinCountAsSpreadOverIt) {
    // Bins of 10 ns. First: 1000 bytes at 200 GB/s over [0, 5 ns), in bin 0. Second from 5 ns
    // at 200 GB/s: an exact calendar would give it the whole 100 GB/s... here bin 0 has 2000 -
    // 1000 = 1000 bytes left over its 10 ns, i.e. 100 GB/s, of which the second's 5 ns hold 500.
    BinnedCalendar l2("l2", 200 * kGBps, 10 * kBin);
    EXPECT_EQ(book({&l2}, 0, 1000, 200 * kGBps), 5 * kBin);
    // 500 bytes in [5, 10 ns), then 500 at 200 GB/s: 2.5 ns -> 12.5 ns.
    EXPECT_EQ(book({&l2}, 5 * kBin, 1000, 200 * kGBps), 12500);
}

TEST(BinnedCalendar, FullBinsMakeATransferWait) {
    BinnedCalendar l2("l2", 10 * kGBps, kBin);
    EXPECT_EQ(book({&l2}, 0, 50, 10 * kGBps), 5 * kBin);  // bins 0-4 full
    EXPECT_EQ(book({&l2}, 2 * kBin, 20, 10 * kGBps), 7 * kBin);  // waits for bin 5, then 2 ns
}

TEST(BinnedCalendar, PathIsLimitedByItsMostLoadedResource) {
    BinnedCalendar l2("l2", 100 * kGBps, kBin), hbm("hbm", 20 * kGBps, kBin);
    EXPECT_EQ(book({&l2, &hbm}, 0, 200, 50 * kGBps), 10 * kBin);  // HBM: 20 bytes per ns
    EXPECT_DOUBLE_EQ(l2.bytes_in(3), 20.0);                       // booked on both
    EXPECT_DOUBLE_EQ(hbm.bytes_in(3), 20.0);
    // A read from the L2 alone now has 80 bytes per ns there for 10 ns.
    EXPECT_EQ(book({&l2}, 0, 800, 100 * kGBps), 10 * kBin);
}

TEST(BinnedCalendar, BackgroundCountsAgainstCapacity) {
    BinnedCalendar l2("l2", 100 * kGBps, kBin);
    BinnedUsage others(4 * kBin);
    others.add(0, 4 * kBin, 240);  // 60 GB/s over [0, 4 ns)
    const UsageSum background = UsageSum(kGBps).plus(&others);
    const std::vector<BinnedCalendar*> path{&l2};
    const std::vector<const UsageSum*> beside{&background};
    // 40 bytes per ns for 4 ns (160 bytes), then the cap of 100 GB/s: 40 more in 0.4 ns.
    EXPECT_EQ(book_binned(path, 0, 200, 100 * kGBps, beside), 4400);
}

TEST(BinnedCalendar, BookingsOutOfTimeOrderShareTheSameBins) {
    BinnedCalendar l2("l2", 10 * kGBps, kBin);
    EXPECT_EQ(book({&l2}, 100 * kBin, 10, 10 * kGBps), 101 * kBin);
    EXPECT_EQ(book({&l2}, 0, 10, 10 * kGBps), 1 * kBin);  // before everything booked so far
    EXPECT_EQ(book({&l2}, 100 * kBin, 10, 10 * kGBps), 102 * kBin);  // bin 100 is still full
}

// The same bookings shifted in time, on calendars whose origin shifts with them, take the same
// time: what a kernel takes does not depend on when it was launched.
TEST(BinnedCalendar, BinsCountedFromTheOriginMakeResultsShiftInvariant) {
    std::vector<std::vector<SimTime>> durations;
    for (const SimTime shift : {SimTime{0}, SimTime{123457}, SimTime{-400}}) {
        BinnedCalendar l2("l2", 100 * kGBps, kBin, 1000 + shift), hbm("hbm", 40 * kGBps, kBin, 1000 + shift);
        std::vector<SimTime> d;
        for (int i = 0; i < 40; ++i) {
            const SimTime start = 1000 + shift + 370 * i - (i % 4 == 3 ? 900 : 0);  // some before the origin
            const double bytes = 500 + 37 * i;
            const SimTime end = i % 3 == 0 ? book({&l2, &hbm}, start, bytes, 60 * kGBps)
                                           : book({&l2}, start, bytes, 70 * kGBps);
            d.push_back(end - start);
        }
        durations.push_back(d);
    }
    EXPECT_EQ(durations[0], durations[1]);
    EXPECT_EQ(durations[0], durations[2]);
}

TEST(BinnedCalendar, NeverBooksBeyondCapacity) {
    BinnedCalendar a("a", 50 * kGBps, kBin), b("b", 30 * kGBps, kBin);
    std::mt19937 random(777);
    for (int i = 0; i < 2000; ++i) {
        const SimTime start = static_cast<SimTime>(random() % 200000);
        const test::RandomTransfer x = test::random_transfer(random);
        const SimTime end = x.path == 0   ? book({&a}, start, x.bytes, x.cap_bytes_per_s)
                            : x.path == 1 ? book({&b}, start, x.bytes, x.cap_bytes_per_s)
                                          : book({&b, &a}, start, x.bytes, x.cap_bytes_per_s);
        EXPECT_GE(end, start + x.min_duration_ps());
    }
    for (std::int64_t bin = 0; bin < 1000; ++bin) {
        EXPECT_LE(a.bytes_in(bin), 50.0 * (1 + 1e-12)) << bin;
        EXPECT_LE(b.bytes_in(bin), 30.0 * (1 + 1e-12)) << bin;
    }
}


// A booking on one resource takes a walk of its own (the usual L2 hit); it must end exactly where
// the general walk ends, with a background and without. The general walk is forced by a second
// resource too large ever to be the most loaded: min(cap, spare, huge spare) is min(cap, spare).
TEST(BinnedCalendar, LoneResourceWalkEndsWhereTheGeneralWalkEnds) {
    BinnedCalendar alone("alone", 40 * kGBps, kBin, 300), general("general", 40 * kGBps, kBin, 300);
    BinnedCalendar huge("huge", std::int64_t{1} << 60, kBin, 300);
    // Others' usage in bins of 5 ns, 0 to 30 GB/s, beside half of the bookings.
    BinnedUsage others(5 * kBin);
    std::mt19937 random(4242);
    for (std::int64_t b = 0; b < 100000; ++b) others.add_to_bin(b, static_cast<double>(random() % 150));
    const UsageSum background = UsageSum(kGBps).plus(&others);
    SimTime last_end = 0;
    for (int i = 0; i < 3000; ++i) {
        const SimTime start = 300 + static_cast<SimTime>(random() % 400000);
        // Walks of 1 to hundreds of bins: they cross the 32-bin chunks, partial and full bins.
        const double bytes = static_cast<double>(random() % 3000) + 0.25 * (random() % 4);
        const std::int64_t cap = static_cast<std::int64_t>(1 + random() % 60) * kGBps;
        const bool beside = i % 2 == 1;
        BinnedCalendar* lone_path[] = {&alone};
        const UsageSum* lone_background[] = {beside ? &background : nullptr};
        BinnedCalendar* general_path[] = {&general, &huge};
        const UsageSum* general_background[] = {beside ? &background : nullptr, nullptr};
        const SimTime lone_end = book_binned(lone_path, start, bytes, cap, lone_background);
        ASSERT_EQ(lone_end, book_binned(general_path, start, bytes, cap, general_background)) << "booking " << i;
        last_end = std::max(last_end, lone_end);
    }
    for (std::int64_t bin = -1; bin <= alone.bin_of(last_end); ++bin) {
        ASSERT_EQ(alone.bytes_in(bin), general.bytes_in(bin)) << bin;
    }
    EXPECT_EQ(alone.bytes_booked(), general.bytes_booked());
}
// A fixed workload; with `forget`, history is forgotten before each booking at its start.
std::vector<SimTime> run_workload(bool forget, BinnedCalendar& a, BinnedCalendar& b) {
    std::vector<SimTime> ends;
    for (int i = 0; i < 200; ++i) {
        const SimTime start = static_cast<SimTime>(i) * 700;
        if (forget) {
            a.forget_before(start);
            b.forget_before(start);
        }
        const double bytes = 100 + 30 * (i % 7);
        const std::int64_t cap = (10 + 15 * (i % 5)) * kGBps;
        ends.push_back(i % 3 == 0 ? book({&a}, start, bytes, cap)
                       : i % 3 == 1 ? book({&b}, start, bytes, cap)
                                    : book({&a, &b}, start, bytes, cap));
    }
    return ends;
}

TEST(BinnedCalendar, ForgettingHistoryDoesNotChangeResults) {
    BinnedCalendar a1("a", 60 * kGBps, kBin), b1("b", 45 * kGBps, kBin);
    BinnedCalendar a2("a", 60 * kGBps, kBin), b2("b", 45 * kGBps, kBin);
    EXPECT_EQ(run_workload(false, a1, b1), run_workload(true, a2, b2));
    EXPECT_LT(a2.bins_kept(), a1.bins_kept());
}

TEST(BinnedCalendar, BookingsFarApartHoldOnlyThePagesTheyLandIn) {
    // A block's scalar books loads milliseconds past the horizon with little between: the bins
    // are kept in pages made where bytes land, not as one span from the first to the last.
    BinnedCalendar l2("l2", 100 * kGBps, kBin);
    constexpr SimTime kFar = 10'000'000'000;  // 10 ms: ten million bins of 1 ns
    EXPECT_EQ(book({&l2}, kFar, 1000, 50 * kGBps), kFar + 20 * kBin);
    EXPECT_EQ(book({&l2}, 0, 1000, 50 * kGBps), 20 * kBin);            // before it: out of order
    EXPECT_EQ(book({&l2}, kFar / 2 - 5 * kBin, 600, 50 * kGBps), kFar / 2 + 7 * kBin);  // across a page edge
    EXPECT_LE(l2.bins_kept(), 4U * 64U);
    EXPECT_DOUBLE_EQ(l2.bytes_in(kFar / kBin), 50.0);
    EXPECT_DOUBLE_EQ(l2.bytes_in(kFar / kBin / 2 - 1), 50.0);
    EXPECT_DOUBLE_EQ(l2.bytes_in(kFar / kBin / 2), 50.0);
    EXPECT_DOUBLE_EQ(l2.bytes_in(kFar / kBin / 3), 0.0);
    // Forgetting the first millisecond releases its page and reads its bins as 0.
    l2.forget_before(1'000'000'000);
    EXPECT_DOUBLE_EQ(l2.bytes_in(0), 0.0);
    EXPECT_LE(l2.bins_kept(), 3U * 64U);
    EXPECT_EQ(book({&l2}, kFar, 1000, 100 * kGBps), kFar + 20 * kBin);  // 50 GB/s left until kFar + 20 ns
}

TEST(BinnedCalendar, ARestartedCalendarBooksAsANewOne) {
    // A used calendar, history forgotten, restarted at another origin, books what a calendar
    // made at that origin books: none of the old bookings, horizon or byte count remain.
    BinnedCalendar used("l2", 60 * kGBps, kBin);
    for (int i = 0; i < 50; ++i) book({&used}, 1000 * i, 4000 + 13 * i, 50 * kGBps);
    used.forget_before(40'000);
    used.restart(7300);
    BinnedCalendar fresh("l2", 60 * kGBps, kBin, 7300);
    EXPECT_EQ(used.bins_kept(), 0U);
    EXPECT_EQ(used.bytes_booked(), 0);
    EXPECT_EQ(used.origin(), 7300);
    for (int i = 0; i < 30; ++i) {
        const SimTime start = 100 + 900 * i;  // before the old horizon too
        EXPECT_EQ(book({&used}, start, 2500 + 7 * i, 45 * kGBps), book({&fresh}, start, 2500 + 7 * i, 45 * kGBps));
    }
    EXPECT_EQ(used.bytes_booked(), fresh.bytes_booked());
}

TEST(BinnedCalendar, RejectsBadRequests) {
    BinnedCalendar l2("rank 3 L2", 100 * kGBps, kBin);
    BinnedCalendar coarse("coarse", 100 * kGBps, 2 * kBin);
    test::expect_sim_error([] { BinnedCalendar("bad", 0, kBin); }, {"bad", "capacity"});
    test::expect_sim_error([] { BinnedCalendar("bad bins", kGBps, 0); }, {"bad bins", "bin length"});
    test::expect_sim_error([&] { book({&l2}, 0, 1e3, 0); }, {"rate cap", "0"});
    test::expect_sim_error([&] { book({&l2}, 0, -1, kGBps); }, {"byte count"});
    test::expect_sim_error([&] { book({&l2}, 0, std::numeric_limits<double>::quiet_NaN(), kGBps); }, {"byte count"});
    test::expect_sim_error([&] { book({&l2}, -1, 1e3, kGBps); }, {"start time", "-1"});
    test::expect_sim_error([&] { book({&l2, &l2}, 0, 1e3, kGBps); }, {"rank 3 L2", "twice"});
    test::expect_sim_error([&] { book({&l2, &coarse}, 0, 1e3, kGBps); }, {"coarse", "bins"});
    test::expect_sim_error([&] { book({}, 0, 1e3, kGBps); }, {"path"});
    BinnedCalendar shifted("shifted", 100 * kGBps, kBin, 500);
    test::expect_sim_error([&] { book({&l2, &shifted}, 0, 1e3, kGBps); }, {"shifted", "from 500 ps"});
    l2.forget_before(5000);
    test::expect_sim_error([&] { book({&l2}, 4999, 1e3, kGBps); }, {"rank 3 L2", "4999", "5000"});
    // Rejected requests leave the calendar usable: 1000 bytes at 1 GB/s from 5 ns.
    EXPECT_EQ(book({&l2}, 5000, 1e3, kGBps), 5000 + 1000 * 1000);
}

}  // namespace binned_calendar_test
}  // namespace tandem
