#pragma once
// The variants of --op gemm (kernels/gemm/README.md).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::gemm {

// Each is the op's defaults (fused_gemm_defaults with no comm kernel) refined.
// pto-isa's gemm_performance kernel, as published (the default).
VariantDesc pto_performance_variant(const VariantDesc& defaults);
// The GEMM kernel of the fused ops (kernels/common), alone.
VariantDesc tiled_variant(const VariantDesc& defaults);

}  // namespace tandem::kernels::gemm
