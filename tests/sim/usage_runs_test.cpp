// What a stream publishes of a window's memory usage (sim/mem/usage_runs.hpp): the runs worked
// out from the usages without bins are exactly those of adding every usage to bins and walking
// them bin by bin, whatever the usages' spans, overlaps and alignment.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/usage_runs.hpp"

namespace tandem {
namespace usage_runs_test {

constexpr SimTime kBin = kMemUsageBinPs;

// The reference: every usage added to bins, the bins read one by one, equal neighbours merged.
std::vector<MemUsage> runs_bin_by_bin(const std::vector<MemUsage>& usages) {
    UsageBins bins;
    for (const MemUsage& u : usages) bins.add(u);
    std::vector<MemUsage> out;
    if (bins.l2.empty() && bins.hbm.empty()) return out;
    const std::int64_t first = std::min(bins.l2.empty() ? bins.hbm.first_bin() : bins.l2.first_bin(),
                                        bins.hbm.empty() ? bins.l2.first_bin() : bins.hbm.first_bin());
    const std::int64_t end = std::max(bins.l2.end_bin(), bins.hbm.end_bin());
    for (std::int64_t b = first; b < end; ++b) {
        const double l2 = bins.l2.bytes_in(b);
        const double hbm = bins.hbm.bytes_in(b);
        if (!(l2 > 0 || hbm > 0)) continue;
        if (!out.empty() && out.back().end == b * kBin && out.back().l2_bytes == l2 && out.back().hbm_bytes == hbm) {
            out.back().end += kBin;
        } else {
            out.push_back(MemUsage{b * kBin, (b + 1) * kBin, l2, hbm, true});
        }
    }
    return out;
}

void expect_same_runs(const std::vector<MemUsage>& got, const std::vector<MemUsage>& want, int trial) {
    ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].start, want[i].start) << "trial " << trial << " run " << i;
        EXPECT_EQ(got[i].end, want[i].end) << "trial " << trial << " run " << i;
        EXPECT_EQ(got[i].l2_bytes, want[i].l2_bytes) << "trial " << trial << " run " << i;  // bit for bit
        EXPECT_EQ(got[i].hbm_bytes, want[i].hbm_bytes) << "trial " << trial << " run " << i;
        EXPECT_TRUE(got[i].per_bin);
    }
}

// Random windows of usages like a stream's: long remote stores queued on a shared link, short
// loads within a bin, spans starting and ending on bin edges, reads with no HBM bytes, atomic
// adds with twice the L2 bytes; from one usage to many (past the count where the bins are used).
std::vector<MemUsage> random_window(std::mt19937_64& rng, int count) {
    std::uniform_int_distribution<int> kind(0, 5);
    std::uniform_int_distribution<SimTime> start_ps(0, 40 * kBin);
    std::uniform_int_distribution<SimTime> long_ps(kBin / 3, 120 * kBin);
    std::uniform_int_distribution<SimTime> short_ps(1, kBin / 2);
    std::uniform_real_distribution<double> bytes(1.0, 1.0e6);
    std::vector<MemUsage> usages;
    for (int i = 0; i < count; ++i) {
        MemUsage u;
        const int k = kind(rng);
        u.start = start_ps(rng);
        if (k == 0) u.start -= u.start % kBin;  // on a bin edge
        u.end = u.start + (k == 1 ? short_ps(rng) : long_ps(rng));
        if (k == 2) u.end += kBin - u.end % kBin;  // ends on a bin edge
        const double b = bytes(rng);
        u.l2_bytes = k == 3 ? 2 * b : b;
        u.hbm_bytes = k == 4 ? 0.0 : b;
        usages.push_back(u);
    }
    return usages;
}

TEST(UsageRuns, SameRunsAsAddingEveryBin) {
    std::mt19937_64 rng(20261206);
    UsageRunsScratch scratch;
    for (int trial = 0; trial < 700; ++trial) {
        // Few usages, then more than one word of covering bits (64 usages a word), then many.
        const int count = trial < 500 ? 1 + trial % 12 : (trial < 600 ? 40 + trial % 60 : 100 + trial % 300);
        const std::vector<MemUsage> usages = random_window(rng, count);
        std::vector<MemUsage> got = usages;
        usages_to_runs(got, scratch);
        expect_same_runs(got, runs_bin_by_bin(usages), trial);
        if (testing::Test::HasFailure()) return;
    }
}

TEST(UsageRuns, AnEmptyUsageAddsNothing) {
    // An empty usage (end at its start) among others, at the front, in the middle and at the
    // end: the runs of the others alone.
    std::mt19937_64 rng(11);
    UsageRunsScratch scratch;
    for (int trial = 0; trial < 60; ++trial) {
        std::vector<MemUsage> others = random_window(rng, 1 + trial % 90);
        std::vector<MemUsage> with_empty = others;
        const MemUsage empty{5 * kBin + 7, 5 * kBin + 7, 100.0, 100.0, false};
        const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(trial) % (with_empty.size() + 1));
        with_empty.insert(with_empty.begin() + at, empty);
        usages_to_runs(with_empty, scratch);
        usages_to_runs(others, scratch);
        expect_same_runs(with_empty, others, trial);
        if (testing::Test::HasFailure()) return;
    }
}

TEST(UsageRuns, BinsWalkedOverTheirGapsGiveTheSameRuns) {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<MemUsage> usages = random_window(rng, 1 + trial % 20);
        // Far apart too: pages with nothing between them.
        if (trial % 2 == 1) {
            for (std::size_t i = 0; i < usages.size(); i += 2) {
                usages[i].start += 5000 * kBin;
                usages[i].end += 5000 * kBin;
            }
        }
        UsageBins bins;
        for (const MemUsage& u : usages) bins.add(u);
        std::vector<MemUsage> got;
        append_bin_runs(bins, got);
        expect_same_runs(got, runs_bin_by_bin(usages), trial);
        EXPECT_TRUE(bins.l2.empty() && bins.hbm.empty());
        if (testing::Test::HasFailure()) return;
    }
}

TEST(UsageRuns, NeighbouringStretchesOfTheSameBytesAreOneRun) {
    // 20 bytes over bins 2 and 3 (10 each), then 10 in bin 4: one run of three bins; 10 in bin 6
    // after an empty bin: a run of its own.
    std::vector<MemUsage> usages{MemUsage{2 * kBin, 4 * kBin, 20.0, 10.0, false},
                                 MemUsage{4 * kBin, 5 * kBin, 10.0, 5.0, false},
                                 MemUsage{6 * kBin, 7 * kBin, 10.0, 5.0, false}};
    UsageRunsScratch scratch;
    usages_to_runs(usages, scratch);
    ASSERT_EQ(usages.size(), 2U);
    EXPECT_EQ(usages[0].start, 2 * kBin);
    EXPECT_EQ(usages[0].end, 5 * kBin);
    EXPECT_EQ(usages[0].l2_bytes, 10.0);
    EXPECT_EQ(usages[0].hbm_bytes, 5.0);
    EXPECT_EQ(usages[1].start, 6 * kBin);
    EXPECT_EQ(usages[1].end, 7 * kBin);
}

}  // namespace usage_runs_test
}  // namespace tandem
