// widen_gm_cached (sim/mem/gm_deferred.hpp): a widened copy of a pinned GM region is reused only
// while the region is provably unchanged (its pins unsnapshotted); a write to the region, or a
// region other than the cached one, gives the current bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/mem/fp16.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/mem/global_memory.hpp"

namespace tandem {
namespace widen_cache_test {

constexpr int kRows = 8, kCols = 16;

void fill(GmAllocation& a, int count, float scale) {
    for (int i = 0; i < count; ++i) {
        const std::uint16_t h = float_to_half(static_cast<float>(i % 29 - 14) * scale);
        std::memcpy(a.data.data() + static_cast<std::size_t>(i) * 2, &h, 2);
    }
}

std::vector<float> expected(const GmTensor& t, float scale) {
    std::vector<float> v;
    for (int r = 0; r < t.rows(); ++r)
        for (int c = 0; c < t.cols(); ++c) {
            const std::int64_t i = (t.offset_bytes() / 2) + std::int64_t{r} * t.ld() + c;
            v.push_back(half_to_float(float_to_half(static_cast<float>(i % 29 - 14) * scale)));
        }
    return v;
}

std::vector<float> values(const float* p, int n) { return std::vector<float>(p, p + n); }

TEST(WidenCache, ReusesUnchangedRegionAndRewidensAfterAWrite) {
    GlobalMemory gm(0, 1 << 20, true);
    GmAllocation& alloc = gm.allocate("a", 2 * kRows * kCols * 2);
    fill(alloc, 2 * kRows * kCols, 0.25f);
    const GmTensor top(alloc, 0, kRows, kCols, kCols, DType::F16, Layout::ND);
    const GmTensor bottom(alloc, kRows * kCols * 2, kRows, kCols, kCols, DType::F16, Layout::ND);
    WorkScratch scratch;
    std::vector<std::shared_ptr<GmPin>> pins{pin_gm_region(top)};
    const float* first = widen_gm_cached(top, pins, scratch);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(values(first, kRows * kCols), expected(top, 0.25f));
    // The same region again: the kept copy (same buffer), same values.
    std::vector<std::shared_ptr<GmPin>> pins2{pin_gm_region(top)};
    EXPECT_EQ(widen_gm_cached(top, pins2, scratch), first);
    // Another region of the allocation: its own values.
    std::vector<std::shared_ptr<GmPin>> pins_b{pin_gm_region(bottom)};
    const float* b = widen_gm_cached(bottom, pins_b, scratch);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(values(b, kRows * kCols), expected(bottom, 0.25f));
    // The region is rewritten (through the hooks, as every GM write is): the current pins are
    // snapshotted, so nothing is served from GM for them...
    gm_before_write(alloc, GmSpan::of(top));
    fill(alloc, 2 * kRows * kCols, 0.5f);
    EXPECT_EQ(widen_gm_cached(top, pins2, scratch), nullptr);
    // ...and a new load of it sees the new bytes, not the kept copy.
    pins.clear();
    pins2.clear();
    std::vector<std::shared_ptr<GmPin>> fresh{pin_gm_region(top)};
    const float* again = widen_gm_cached(top, fresh, scratch);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(values(again, kRows * kCols), expected(top, 0.5f));
}

TEST(WidenCache, StaysWithinItsEntryBound) {
    GlobalMemory gm(0, 1 << 22, true);
    const int regions = static_cast<int>(kWidenCacheEntries) + 4;
    GmAllocation& alloc = gm.allocate("a", std::int64_t{regions} * kRows * kCols * 2);
    fill(alloc, regions * kRows * kCols, 0.125f);
    WorkScratch scratch;
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < regions; ++i) {
            const GmTensor t(alloc, std::int64_t{i} * kRows * kCols * 2, kRows, kCols, kCols, DType::F16, Layout::ND);
            std::vector<std::shared_ptr<GmPin>> pins{pin_gm_region(t)};
            const float* v = widen_gm_cached(t, pins, scratch);
            ASSERT_NE(v, nullptr);
            EXPECT_EQ(values(v, kRows * kCols), expected(t, 0.125f)) << "region " << i << " pass " << pass;
        }
    }
    EXPECT_LE(scratch.widened.size(), kWidenCacheEntries);
}

}  // namespace widen_cache_test
}  // namespace tandem
