#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "sim/mem/traffic_pool.hpp"

namespace tandem {
namespace traffic_pool_test {

TEST(TrafficPool, ARecordLetGoComesBackEmptyWithItsCapacity) {
    auto pool = TrafficPool::make();
    std::shared_ptr<MemTraffic> first = pool->take();
    ASSERT_TRUE(first);
    first->usage.resize(100);
    first->touched_regions.assign(50, RegionTouch{0});
    const MemTraffic* address = first.get();
    first.reset();  // the chip applied it
    std::shared_ptr<MemTraffic> again = pool->take();
    EXPECT_EQ(again.get(), address);  // the same record, reused
    EXPECT_TRUE(again->usage.empty());
    EXPECT_TRUE(again->touched_regions.empty());
    EXPECT_GE(again->usage.capacity(), 100U);
    EXPECT_GE(again->touched_regions.capacity(), 50U);
}

TEST(TrafficPool, RecordsInFlightAreDistinct) {
    auto pool = TrafficPool::make();
    std::shared_ptr<MemTraffic> a = pool->take();
    std::shared_ptr<MemTraffic> b = pool->take();
    EXPECT_NE(a.get(), b.get());
}

TEST(TrafficPool, ARecordOutlivesItsStreamAndComesBackFromAnotherThread) {
    std::shared_ptr<const MemTraffic> in_flight;
    {
        auto pool = TrafficPool::make();
        std::shared_ptr<MemTraffic> t = pool->take();
        t->usage.push_back(MemUsage{0, 10, 1, 1});
        in_flight = std::move(t);
    }  // the stream (and its handle on the pool) is gone; the chip still holds the record
    EXPECT_EQ(in_flight->usage.size(), 1U);
    std::thread applier([&] { in_flight.reset(); });  // applied and let go on another host thread
    applier.join();
    EXPECT_FALSE(in_flight);
}

}  // namespace traffic_pool_test
}  // namespace tandem
