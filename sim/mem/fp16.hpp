#pragma once
// IEEE 754 binary16 <-> binary32 conversion (exact for widening; round-to-nearest-even for
// narrowing). Written out so the result does not depend on compiler support for _Float16.
#include <bit>
#include <cstdint>

namespace tandem {

inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1Fu;
    std::uint32_t mant = h & 0x3FFu;
    std::uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (mant << 13);  // inf / nan
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;  // signed zero
    } else {  // subnormal: normalise
        exp = 113;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --exp;
        }
        bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
    }
    return std::bit_cast<float>(bits);
}

inline std::uint16_t float_to_half(float f) {
    const auto x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t abs = x & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0));
    if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow -> inf
    if (abs < 0x38800000u) {  // result is subnormal or zero
        if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);
        const std::uint32_t e = abs >> 23;
        const std::uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
        const std::uint32_t shift = 126 - e;
        std::uint32_t r = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1);
        const std::uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return static_cast<std::uint16_t>(sign | r);
    }
    std::uint32_t r = ((abs >> 13) - (112u << 10));
    const std::uint32_t rem = abs & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
}

}  // namespace tandem
