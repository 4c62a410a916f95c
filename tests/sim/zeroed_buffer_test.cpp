// ZeroedBuffer (sim/mem/zeroed_buffer.hpp): zeroed whatever its size, large ones on their own
// 2 MiB-aligned mapping (huge-page advice), moves hand the memory over and free it once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "sim/mem/zeroed_buffer.hpp"

namespace tandem {
namespace zeroed_buffer_test {

bool all_zero(const ZeroedBuffer& b) {
    return std::all_of(b.data(), b.data() + b.size(), [](std::byte x) { return x == std::byte{0}; });
}

TEST(ZeroedBuffer, SmallAndLargeAreZeroedWithTheirSize) {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, ZeroedBuffer::kHugeBytes - 1, ZeroedBuffer::kHugeBytes,
                              ZeroedBuffer::kHugeBytes * 3 + 123}) {
        const ZeroedBuffer b(bytes);
        EXPECT_EQ(b.size(), bytes);
        EXPECT_FALSE(b.empty());
        EXPECT_TRUE(all_zero(b)) << bytes << " bytes";
    }
    EXPECT_TRUE(ZeroedBuffer(0).empty());
    EXPECT_EQ(ZeroedBuffer(0).data(), nullptr);
}

TEST(ZeroedBuffer, LargeBuffersStartOnA2MiBBoundaryAndAreWritableToTheEnd) {
    ZeroedBuffer b(ZeroedBuffer::kHugeBytes * 2 + 7);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % ZeroedBuffer::kHugeBytes, 0u);
    b.data()[0] = std::byte{1};
    b.data()[b.size() - 1] = std::byte{2};
    EXPECT_EQ(b.data()[b.size() - 1], std::byte{2});
}

TEST(ZeroedBuffer, MovesHandTheBytesOver) {
    ZeroedBuffer a(ZeroedBuffer::kHugeBytes);
    a.data()[5] = std::byte{9};
    std::byte* where = a.data();
    ZeroedBuffer b(std::move(a));
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.data(), where);
    EXPECT_EQ(b.data()[5], std::byte{9});
    ZeroedBuffer c(64);
    c = std::move(b);  // c's small buffer freed, the large one taken over
    EXPECT_EQ(c.data(), where);
    EXPECT_EQ(c.size(), ZeroedBuffer::kHugeBytes);
    c = ZeroedBuffer(16);  // the large mapping released
    EXPECT_EQ(c.size(), 16u);
    EXPECT_TRUE(all_zero(c));
}

}  // namespace zeroed_buffer_test
}  // namespace tandem
