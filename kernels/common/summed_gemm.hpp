#pragma once
// The GEMM part of the ops whose output is a sum over ranks of A_r x B_r (matmul_all_reduce,
// matmul_reduce_scatter), in one place (a later schedule, stream_k
// or hybrid, changes only tiles_of_block): rank r's partial C_r = A_r x B_r in base_m x base_n
// tiles on the cube, the bias added by rank 0 alone (TMATMUL_BIAS on a tile's first K step, so
// the sum over ranks holds it exactly once).
#include <string>
#include <vector>

#include "kernels/common/gemm_tiles.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

struct SummedGemm {
    GemmGrid grid;
    GmTensor bias;  // not valid: this rank adds no bias
    BiasKind bias_kind = BiasKind::None;
    std::string schedule = "data_parallel";
    bool skip_last_k_panel = false;  // fault (tests only): each tile misses its last K panel
};

// The GEMM part of `rank` (rank 0 adds the bias).
SummedGemm summed_gemm_of(const OpParams& p, const RankTensors& t, int rank);

// The tiles block `block` of `blocks` computes, in order.
std::vector<int> tiles_of_block(const SummedGemm& g, int block, int blocks);

// Tile t's K loop into the pipeline's accumulator, from the bias when this rank adds it.
Task compute_partial_tile(GemmTilePipeline& pipe, const SummedGemm& g, int t);

// The GEMM part alone: every tile stored into `c` on this rank (the compute-only view, and the
// first kernel of the sequential baseline).
KernelLaunch make_partial_gemm_kernel(const SummedGemm& g, const GmTensor& c, int blocks);

}  // namespace tandem::kernels
