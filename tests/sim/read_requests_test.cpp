// One core's local reads bound by its requests in flight (sim/mem/read_requests.hpp, MemoryView::
// book_local): a read that misses the L2 waits for HBM's latency per request, so it moves slower
// per core than one that hits, however much bandwidth HBM has left.
#include <gtest/gtest.h>

#include <cstdint>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/memory_view.hpp"
#include "sim/mem/read_requests.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace read_requests_test {

constexpr std::int64_t kInFlight = 8192;          // bytes of requests one core keeps out
constexpr SimTime kHitPs = 25'000;                // an L2 hit's latency
constexpr SimTime kMissPs = 75'000;               // what a miss adds
constexpr std::int64_t kFast = 1'000'000'000'000; // 1 TB/s: neither the L2, HBM nor the core binds

TEST(ReadRequests, RateIsBytesInFlightOverTheMeanLatencyOfTheRequests) {
    const ReadRequests r{kInFlight, kHitPs, kMissPs};
    EXPECT_EQ(r.rate_bps(0.0), 8192LL * 1'000'000'000'000 / 25'000);   // all hits: 327.68 GB/s
    EXPECT_EQ(r.rate_bps(1.0), 8192LL * 1'000'000'000'000 / 100'000);  // all misses: 81.92 GB/s
    EXPECT_EQ(r.rate_bps(0.5), 8192LL * 1'000'000'000'000 / 62'500);   // half: the mean latency
    EXPECT_FALSE(ReadRequests{}.bounded());
}

// A fresh chip (nothing resident) with one stream's view of it.
struct ColdChip : ::testing::Test {
    static constexpr std::int64_t kRegion = 1 << 20;
    GlobalMemory gm{0, std::int64_t{1} << 30, false};
    GmAllocation& a = gm.allocate("a", 4 * kRegion);
    const GmTensor tile = GmTensor(a, 0, 16, 1024, 1024, DType::F32);  // 64 KiB
    ChipMemory mem{64 * kRegion, kRegion};
    MemoryView view{mem, 0, 8, kFast, kFast};
    const ReadRequests requests{kInFlight, kHitPs, kMissPs};
};

TEST_F(ColdChip, AMissReadsAtTheRequestsRateAndAHitAtTheFasterOne) {
    const double bytes = 65536;
    // From HBM: 64 KiB at 8 KiB per 100 ns.
    const SimTime miss_end = view.book_local(tile, MemAccess::Read, 0, 0, bytes, kFast, requests);
    EXPECT_NEAR(static_cast<double>(miss_end), 800'000.0, 1'000.0);
    // The same bytes again are resident: 8 KiB per 25 ns.
    const SimTime start = 1'000'000;
    const SimTime hit_end = view.book_local(tile, MemAccess::Read, start, start, bytes, kFast, requests);
    EXPECT_NEAR(static_cast<double>(hit_end - start), 200'000.0, 1'000.0);
    // The core's own path, when slower, still binds: 64 KiB at 32 GB/s.
    const SimTime slow_start = 2'000'000;
    const SimTime slow_end = view.book_local(tile, MemAccess::Read, slow_start, slow_start, bytes, 32'000'000'000, requests);
    EXPECT_NEAR(static_cast<double>(slow_end - slow_start), 2'048'000.0, 1'000.0);
}

TEST_F(ColdChip, WithoutRequestsInFlightAMissMovesAtThePathsRate) {
    const SimTime end = view.book_local(tile, MemAccess::Read, 0, 0, 65536, kFast);
    EXPECT_LT(end, 100'000);  // 64 KiB at 1 TB/s: 66 ns, no latency per request
}

TEST_F(ColdChip, ASmallMissTakesAtLeastTheMissLatency) {
    // 256 B is far less than the requests in flight: one miss's latency, not 256 B at the rate.
    const SimTime end = view.book_local(tile.sub(0, 0, 1, 64), MemAccess::Read, 0, 0, 256, kFast, requests);
    EXPECT_GE(end, kMissPs);
}

TEST_F(ColdChip, WritesAreNotBoundByReadRequests) {
    const SimTime end = view.book_local(tile, MemAccess::Write, 0, 0, 65536, kFast, requests);
    EXPECT_LT(end, 100'000);
}

}  // namespace read_requests_test
}  // namespace tandem
