// fp16 widening: the bulk path (F16C when the CPU has it) gives exactly the bits of the scalar
// reference for every one of the 65536 halves, at every alignment and tail length.
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "sim/mem/fp16.hpp"
#include "sim/mem/fp16_widen.hpp"

namespace fp16_test {

std::uint32_t bits_of(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

TEST(Fp16Widen, EveryHalfMatchesTheScalarConversion) {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    std::vector<float> wide(all.size());
    tandem::widen_halves(all.data(), wide.data(), all.size());
    int mismatches = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        // NaNs: both give a NaN of the same sign (a quiet one from F16C); everything else is exact.
        const float ref = tandem::half_to_float(all[i]);
        const bool same = ref != ref ? (wide[i] != wide[i] && (bits_of(wide[i]) >> 31) == (bits_of(ref) >> 31))
                                     : bits_of(wide[i]) == bits_of(ref);
        if (!same && ++mismatches <= 5) ADD_FAILURE() << "half 0x" << std::hex << i << " widened to 0x" << bits_of(wide[i]);
    }
    EXPECT_EQ(mismatches, 0);
}

TEST(Fp16Widen, UnalignedStartsAndShortTails) {
    const std::uint16_t values[] = {0x3C00, 0xC000, 0x0001, 0x7BFF, 0x8400, 0x3555, 0x0000, 0x8000, 0x4248, 0x5A00, 0x1234};
    constexpr std::size_t n = sizeof values / sizeof values[0];
    for (std::size_t start = 0; start < n; ++start) {
        for (std::size_t len = 0; start + len <= n; ++len) {
            std::vector<float> out(len + 1, -7.0f);
            tandem::widen_halves(values + start, out.data(), len);
            for (std::size_t i = 0; i < len; ++i) EXPECT_EQ(out[i], tandem::half_to_float(values[start + i]));
            EXPECT_EQ(out[len], -7.0f) << "wrote past the end (start " << start << ", length " << len << ")";
        }
    }
}

}  // namespace fp16_test
