#pragma once
// The integer rounding every tiling and memory layout uses: how many tiles cover a length, a
// length padded to whole tiles, an offset aligned for the next region. One definition, so that
// a kernel, its layout and its description can never disagree on a count.
//
// For non-negative values and a positive step (callers validate both before they lay anything
// out). Where a count may overflow int (absurd shapes that must get a message, not a wrap), the
// descriptions compute in double instead (VariantDesc::workspace_bytes).
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace tandem::kernels {

// ceil(a / b): the tiles of size b that cover a.
template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> ceil_div(A a, B b) {
    return (a + b - 1) / b;
}

// a rounded up to a multiple of step: a padded to whole tiles, an offset aligned.
template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> round_up(A a, B step) {
    return ceil_div(a, step) * step;
}

// Workspace regions start at multiples of this many bytes (the alignment the ops' layouts
// keep between a region and the next: a DMA-friendly boundary for data after flag words).
inline constexpr std::int64_t kRegionAlignBytes = 32;

}  // namespace tandem::kernels
