#pragma once
// What writing your own fused op takes (docs/WRITE_A_KERNEL.md): its description (OpDesc,
// VariantDesc, OpInstance, views), the tile ISA its kernels are written in, and the shared GEMM
// pieces every shipped op uses. Add the op to a context with ctx.ops().add(...) (tandem.hpp).
//
// Build tree only: these headers are the simulator's own (sim/, kernels/) and are not installed;
// a user op is built inside Tandem's CMake project (as examples/custom_kernel/ is), linking
// tandem_kernels and Tandem::tandem. An installed Tandem runs the shipped ops only.
#include "kernels/common/gemm_bias.hpp"           // bias_tile_slice: the bias slice of a tile
#include "kernels/common/gemm_tile_pipeline.hpp"  // GemmTilePipeline: the cube K loop (double-buffered)
#include "kernels/common/gemm_tiles.hpp"          // GemmGrid, data_parallel_tiles, compute_tile
#include "kernels/common/op_checks.hpp"           // one-line validation messages
#include "kernels/op_desc.hpp"                    // OpDesc, VariantDesc, OpInstance, ViewPlan
#include "sim/isa/isa.hpp"                        // TLOAD, TSTORE, TMATMUL, TNOTIFY, TWAIT, flags
#include "sim/runtime/runtime.hpp"                // HostContext: a view's host reset
#include "tandem/tandem.hpp"
