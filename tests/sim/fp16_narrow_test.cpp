// narrow_16bit (sim/mem/fp16_widen.hpp): the bulk fp32 -> fp16/bf16 conversion gives, bit for
// bit, what float_to_half / float_to_bf16 give element by element (the F16C path's rounding,
// overflow, subnormals and NaNs included), at every length (vector groups and tails).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/mem/fp16_widen.hpp"

namespace tandem {
namespace fp16_narrow_test {

float from_bits(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

// Every fp16 value, the fp32 values just around each one and each midpoint between
// neighbours (where rounding to nearest even decides), specials and random bit patterns.
std::vector<float> probe_values() {
    std::vector<float> v;
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = half_to_float(static_cast<std::uint16_t>(h));
        std::uint32_t b;
        std::memcpy(&b, &f, sizeof b);
        for (std::uint32_t d : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u}) {
            v.push_back(from_bits(b + d));
            v.push_back(from_bits(b - d));
        }
    }
    for (std::uint32_t b : {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u, 0xFFC12345u, 0x7FBFFFFFu, 0x477FEFFFu, 0x477FF000u,
                            0x477FF001u, 0x33000000u, 0x33000001u, 0x38800000u, 0x387FFFFFu, 0x00000001u, 0x80000001u})
        v.push_back(from_bits(b));
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) v.push_back(from_bits(static_cast<std::uint32_t>(rng())));
    return v;
}

TEST(Fp16Narrow, MatchesElementByElementConversion) {
    const std::vector<float> v = probe_values();
    for (DType t : {DType::F16, DType::BF16}) {
        std::vector<std::uint16_t> got(v.size());
        narrow_16bit(t, v.data(), got.data(), v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::uint16_t want = t == DType::F16 ? float_to_half(v[i]) : float_to_bf16(v[i]);
            ASSERT_EQ(got[i], want) << (t == DType::F16 ? "fp16" : "bf16") << " element " << i;
        }
    }
}

TEST(Fp16Narrow, EveryLengthAndANanInAGroup) {
    std::vector<float> v;
    for (int i = 0; i < 37; ++i) v.push_back(static_cast<float>(i) * 1.0009765625f - 3.3f);
    v[13] = std::numeric_limits<float>::quiet_NaN();
    v[14] = from_bits(0x7F812345u);  // a signalling NaN with a payload
    for (std::size_t n = 0; n <= v.size(); ++n) {
        std::vector<std::uint16_t> got(n + 1, 0xABCD);
        narrow_16bit(DType::F16, v.data(), got.data(), n);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], float_to_half(v[i])) << "length " << n << " element " << i;
        EXPECT_EQ(got[n], 0xABCD) << "wrote past the end at length " << n;
    }
}

}  // namespace fp16_narrow_test
}  // namespace tandem
