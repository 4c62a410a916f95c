#pragma once
// The Iris variants of matmul_all_reduce (each in its own file).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mar {

VariantDesc atomic_variant();
VariantDesc one_shot_variant();
VariantDesc two_shot_variant();
VariantDesc ring_variant();

// What every variant checks: the GEMM tile fits the cube's buffers.
void validate_common(const OpParams& p, const BufferLimits& lim);

}  // namespace tandem::kernels::mar
