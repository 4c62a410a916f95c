#pragma once
// The depth of one K panel of the cube's GEMM, by operand dtype: base_n for fp16 and bf16 (as both
// published Ascend kernels have it), base_n / 2 for fp32 and 2 base_n for int8, so a panel holds
// the same bytes in L1 and its K steps the same bytes in L0A/L0B (a 512-byte fractal is 16 x 16
// fp16 values, 16 x 8 fp32 or 16 x 32 int8: half or twice the K depth). The output tile
// (base_m x base_n) does not change with the dtype.
#include "sim/mem/dtype.hpp"

namespace tandem::kernels {

inline constexpr int panel_k_for(int base_n, DType dtype) {
    switch (dtype_bytes(dtype)) {
        case 4: return base_n / 2;
        case 1: return base_n * 2;
        default: return base_n;
    }
}

// The cube's accumulator dtype for operands of `dtype`: int32 for int8 (exact integer sums), fp32
// for the float types.
inline constexpr DType accumulator_dtype(DType dtype) { return dtype == DType::I8 ? DType::I32 : DType::F32; }

}  // namespace tandem::kernels
