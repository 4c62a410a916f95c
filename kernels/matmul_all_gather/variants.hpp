#pragma once
// The variants of matmul_all_gather (each in its own file).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mag {

// The op's defaults (fused_gemm_defaults, the output in the window) refined.
VariantDesc fused_variant(const VariantDesc& defaults);

}  // namespace tandem::kernels::mag
