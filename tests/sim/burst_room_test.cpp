// The one rule for the room a burst leaves in a vector (sim/burst_room.hpp): kKeptSpareElements
// and twice what the vector holds are kept, more is freed, and what the vector holds is unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/burst_room.hpp"

namespace tandem {
namespace burst_room_test {

TEST(BurstRoom, AFewSpareElementsAreKept) {
    std::vector<std::int64_t> v;
    v.reserve(kKeptSpareElements);
    const std::size_t room = v.capacity();
    EXPECT_FALSE(holds_burst_room(v));
    release_burst_room(v);
    EXPECT_EQ(v.capacity(), room);  // an emptied vector keeps a few: it fills again next window
}

TEST(BurstRoom, ABurstsRoomIsFreedAndTheContentsKept) {
    std::vector<std::int64_t> v;
    for (std::int64_t i = 0; i < 100'000; ++i) v.push_back(i);
    v.resize(10);
    EXPECT_TRUE(holds_burst_room(v));
    release_burst_room(v);
    EXPECT_FALSE(holds_burst_room(v));
    EXPECT_LT(v.capacity(), 100u);
    ASSERT_EQ(v.size(), 10u);
    for (std::int64_t i = 0; i < 10; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], i);
    v.clear();
    v.shrink_to_fit();
    for (std::int64_t i = 0; i < 100'000; ++i) v.push_back(i);
    v.clear();
    release_burst_room(v);
    EXPECT_EQ(v.capacity(), 0u);  // emptied after a burst: nothing kept
}

}  // namespace burst_room_test
}  // namespace tandem
