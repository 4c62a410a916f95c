#pragma once
// The variants of --op gemm (kernels/gemm/README.md).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::gemm {

// pto-isa's gemm_performance kernel, as published (the default).
VariantDesc pto_performance_variant();
// The GEMM kernel of the fused ops (kernels/common), alone.
VariantDesc tiled_variant();

}  // namespace tandem::kernels::gemm
