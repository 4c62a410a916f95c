#pragma once
// The variants of matmul_reduce_scatter (each in its own file).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mrs {

VariantDesc tile_owner_variant();
VariantDesc atomic_variant();

// What every variant checks: the GEMM tile fits, N splits into whole-tile column blocks.
void validate_common(const OpParams& p, const BufferLimits& lim);

}  // namespace tandem::kernels::mrs
