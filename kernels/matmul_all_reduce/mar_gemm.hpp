#pragma once
// The GEMM part every matmul_all_reduce variant shares, in one place (a later schedule, stream_k
// or hybrid, changes only tiles_of_block): rank r's partial C_r = A_r x B_r in base_m x base_n
// tiles on the cube, the bias added by rank 0 alone (TMATMUL_BIAS on a tile's first K step, so
// the sum over ranks holds it exactly once).
#include <string>
#include <vector>

#include "kernels/common/gemm_tiles.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mar {

struct MarGemm {
    GemmGrid grid;
    GmTensor bias;  // not valid: this rank adds no bias
    BiasKind bias_kind = BiasKind::None;
    std::string schedule = "data_parallel";
};

// The GEMM part of `rank` (rank 0 adds the bias).
MarGemm mar_gemm_of(const OpParams& p, const RankTensors& t, int rank);

// The tiles block `block` of `blocks` computes, in order.
std::vector<int> tiles_of_block(const MarGemm& g, int block, int blocks);

// Tile t's K loop into the pipeline's accumulator, from the bias when this rank adds it.
Task compute_partial_tile(GemmTilePipeline& pipe, const MarGemm& g, int t);

// The GEMM part alone: every tile stored into `c` on this rank (the compute-only view, and the
// first kernel of the sequential baseline).
KernelLaunch make_partial_gemm_kernel(const MarGemm& g, const GmTensor& c, int blocks);

}  // namespace tandem::kernels::mar
