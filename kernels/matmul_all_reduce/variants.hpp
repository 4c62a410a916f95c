#pragma once
// The Iris variants of matmul_all_reduce (each in its own file).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mar {

// Each is the op's defaults (iris_defaults) refined.
VariantDesc atomic_variant(const VariantDesc& defaults);
VariantDesc one_shot_variant(const VariantDesc& defaults);
VariantDesc two_shot_variant(const VariantDesc& defaults);
VariantDesc ring_variant(const VariantDesc& defaults);

// What the Iris variants share: fused_gemm_defaults, the output in the window (peers add or
// store into it), the GEMM tile checked against the cube's buffers (and stream-K's blocks).
VariantDesc iris_defaults();

}  // namespace tandem::kernels::mar
