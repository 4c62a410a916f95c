#pragma once
// What the variants of the tile-padded GEMM ops (the Iris ops, matmul_reduce_scatter, gemm's
// tiled) have in common, as VariantDesc defaults (derive_variant): fp16, bf16, fp32 or int8 in
// (fp32 and int8 as Iris's ops take them: the cube multiplies fp32 operands, or int8 ones into
// int32, kernels/common/panel_k.hpp); fp32 or the input dtype out (fp32 the default; int8 inputs:
// fp32 only, and no bias, check_int8_rules); an M or N bias; every rank tensor padded to whole
// tiles.
// An op refines them (its validation, workspace, knobs) into its own defaults.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// M to base-m, N to base-n, K to the depth of a K panel of the shared GEMM pipeline (base-n, or
// base-n / 2 for fp32, 2 base-n for int8: kernels/common/panel_k.hpp).
Padding whole_tile_padding(const OpParams& p);

VariantDesc fused_gemm_defaults();

}  // namespace tandem::kernels
