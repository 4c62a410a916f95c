// The bandwidth calendar against its previous implementation (tests/support/reference_calendar.hpp, a
// std::map of breakpoints): on random workloads shaped like the simulator's (bookings that start
// anywhere ahead of a slowly rising horizon, paths of one to a dozen resources, contention that
// makes transfers wait and change rate many times, history forgotten as it goes), every end
// time, every step function, every breakpoint count and every error must be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sim/net/bandwidth_calendar.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/reference_calendar.hpp"

namespace tandem {
namespace calendar_reference_test {

constexpr std::int64_t kGBps = 1000 * 1000 * 1000;

struct Pair {
    std::vector<std::unique_ptr<BandwidthCalendar>> current;
    std::vector<std::unique_ptr<reference::ReferenceCalendar>> reference;

    void add(const std::string& name, std::int64_t capacity) {
        current.push_back(std::make_unique<BandwidthCalendar>(name, capacity));
        reference.push_back(std::make_unique<reference::ReferenceCalendar>(name, capacity));
    }
};

// Books the same request on both; returns false (after recording a failure) if they differ.
bool book_both(Pair& cals, const std::vector<std::size_t>& path, SimTime start, double bytes, std::int64_t cap,
               int step) {
    std::vector<BandwidthCalendar*> a;
    std::vector<reference::ReferenceCalendar*> b;
    for (std::size_t i : path) {
        a.push_back(cals.current[i].get());
        b.push_back(cals.reference[i].get());
    }
    std::string error_a, error_b;
    SimTime end_a = -1, end_b = -1;
    try {
        end_a = book_transfer(a, start, bytes, cap);
    } catch (const SimError& e) {
        error_a = e.what();
    }
    try {
        end_b = reference::reference_book_transfer(b, start, bytes, cap);
    } catch (const SimError& e) {
        error_b = e.what();
    }
    EXPECT_EQ(end_a, end_b) << "step " << step;
    EXPECT_EQ(error_a, error_b) << "step " << step;
    return end_a == end_b && error_a == error_b;
}

void expect_same_state(const Pair& cals, int step) {
    for (std::size_t i = 0; i < cals.current.size(); ++i) {
        ASSERT_EQ(cals.current[i]->breakpoint_count(), cals.reference[i]->breakpoint_count())
            << "calendar " << i << ", step " << step;
        ASSERT_EQ(cals.current[i]->steps(), cals.reference[i]->steps()) << "calendar " << i << ", step " << step;
        ASSERT_DOUBLE_EQ(cals.current[i]->bytes_booked(), cals.reference[i]->bytes_booked());
    }
}

// One random workload. `spread_ps`: how far ahead of the horizon bookings may start (the pipes
// running ahead of the scalar); `cap_gbps_max` against capacities of 100..400 GB/s sets how often
// transfers are limited by what others booked.
// Returns the most breakpoints one calendar held at a check.
std::size_t run_workload(std::uint32_t seed, int bookings, SimTime spread_ps, int cap_gbps_max, int max_path) {
    std::size_t most = 0;
    std::mt19937 random(seed);
    Pair cals;
    const int n = 12;
    for (int i = 0; i < n; ++i) cals.add("res" + std::to_string(i), static_cast<std::int64_t>(100 + 25 * i) * kGBps);
    SimTime horizon = 0;
    for (int step = 0; step < bookings; ++step) {
        if (random() % 4 == 0) {
            horizon += static_cast<SimTime>(random() % (spread_ps / 1024 + 1));
            const std::size_t which = random() % cals.current.size();
            cals.current[which]->forget_before(horizon);
            cals.reference[which]->forget_before(horizon);
        }
        // Mostly one or two resources (fabric, one link); sometimes a long route.
        std::size_t hops = 1 + random() % 2;
        if (random() % 16 == 0) hops = 1 + random() % static_cast<std::uint32_t>(max_path);
        std::vector<std::size_t> path;
        while (path.size() < hops) {
            const std::size_t r = random() % cals.current.size();
            if (std::find(path.begin(), path.end(), r) == path.end() || random() % 64 == 0) path.push_back(r);
        }
        // Usually ahead of the horizon; rarely before it (an error both must report alike).
        SimTime start = horizon + static_cast<SimTime>(random() % static_cast<std::uint32_t>(spread_ps));
        if (random() % 200 == 0) start = horizon - 1 - static_cast<SimTime>(random() % 1000);
        if (start < 0) start = 0;
        const double bytes = random() % 50 == 0 ? 0.0 : static_cast<double>(1 + random() % 200000) + (random() % 3) * 0.25;
        const std::int64_t cap = static_cast<std::int64_t>(1 + random() % static_cast<std::uint32_t>(cap_gbps_max)) * kGBps +
                                 static_cast<std::int64_t>(random() % 1000);
        if (!book_both(cals, path, start, bytes, cap, step)) return most;
        if (step % 97 == 0 || step == bookings - 1) {
            expect_same_state(cals, step);
            if (::testing::Test::HasFatalFailure()) return most;
            for (const auto& c : cals.current) most = std::max(most, c->breakpoint_count());
        }
    }
    for (std::size_t i = 0; i < cals.current.size(); ++i) {
        for (int k = 0; k < 200; ++k) {
            const SimTime t = horizon + static_cast<SimTime>(random() % static_cast<std::uint32_t>(spread_ps * 2));
            EXPECT_EQ(cals.current[i]->used_at(t), cals.reference[i]->used_at(t));
        }
    }
    return most;
}

TEST(CalendarReference, LightLoadFewBreakpoints) { run_workload(1, 4000, 2'000'000, 40, 4); }

TEST(CalendarReference, HeavyContentionManyRateChanges) { run_workload(2, 4000, 5'000'000, 400, 4); }

// Bookings far ahead of the horizon: thousands of breakpoints per calendar (leaf splits, the
// interpolated search over many leaves).
TEST(CalendarReference, LongRunAheadThousandsOfBreakpoints) {
    EXPECT_GT(run_workload(3, 20000, 400'000'000, 150, 3), 2000U);
}

// Routes longer than the cursors kept on the stack, and transfers crossing many breakpoints (more
// rate changes than the walk buffers before writing).
TEST(CalendarReference, LongRoutesAndLongTransfers) { run_workload(4, 3000, 20'000'000, 400, 12); }

TEST(CalendarReference, ManySeeds) {
    for (std::uint32_t seed = 10; seed < 40; ++seed) {
        run_workload(seed, 800, static_cast<SimTime>(1'000'000) << (seed % 10), 50 + 30 * static_cast<int>(seed % 12),
                     2 + static_cast<int>(seed % 10));
        if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace calendar_reference_test
}  // namespace tandem
