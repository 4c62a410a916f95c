#pragma once
// bfloat16 <-> binary32: widening is exact (bf16 is the upper half of a float); narrowing
// rounds to nearest, ties to even, as Ascend's casts (CAST_RINT) and FIX pipe do. NaN stays a
// (quiet) NaN of the same sign; overflow rounds to infinity.
#include <bit>
#include <cstdint>

namespace tandem {

inline float bf16_to_float(std::uint16_t h) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

inline std::uint16_t float_to_bf16(float f) {
    const auto x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN, quieted
    const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>((x + rounding) >> 16);
}

}  // namespace tandem
