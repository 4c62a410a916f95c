#pragma once
// The depth of one K panel of the cube's GEMM, by operand dtype: base_n for fp16 and bf16 (as both
// published Ascend kernels have it), base_n / 2 for fp32, so a panel holds the same bytes in L1
// and its K steps the same bytes in L0A/L0B (an fp32 fractal is 16 x 8 values where an fp16 one is
// 16 x 16: half the K depth). The output tile (base_m x base_n) does not change with the dtype.
#include "sim/mem/dtype.hpp"

namespace tandem::kernels {

inline constexpr int panel_k_for(int base_n, DType dtype) { return dtype_bytes(dtype) == 4 ? base_n / 2 : base_n; }

}  // namespace tandem::kernels
