#pragma once
// The variants of matmul_reduce_scatter (each in its own file).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mrs {

// Each is the op's defaults (mrs_defaults) refined.
VariantDesc tile_owner_variant(const VariantDesc& defaults);
VariantDesc atomic_variant(const VariantDesc& defaults);

// What every variant shares: fused_gemm_defaults, the output in the window, the GEMM tile checked
// against the cube's buffers and N split into whole-tile column blocks, the workspace of
// mrs_run.hpp.
VariantDesc mrs_defaults();

}  // namespace tandem::kernels::mrs
