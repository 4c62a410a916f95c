#pragma once
// Device code shared by the ops where each rank computes one block of a replicated C and every
// rank's output gets that block: matmul_all_scatter (rank r's column block C[:, r*N/W ..) =
// A x B_r) and matmul_all_gather (rank r's row block C[r*M/W .., :] = A_r x B). The block is
// computed in base_m x base_n tiles:
//   - the GEMM kernel (AIC) stores each tile into the rank's own output and, when the variant
//     overlaps, raises the tile's ready flag once the store has landed;
//   - the scatter (AIV, kernels/common/collectives/scatter_tiles) pushes ready tiles to the peers;
//   - fused_sequential: one AIC kernel that stores each finished tile into every rank's output;
//   - specialized: one MIX kernel, its first gemm_blocks clusters computing (AIC), the rest
//     scattering (both AIVs of each).
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

struct GemmBlockArgs {
    int my_rank = 0;
    int ranks = 0;
    GmTensor a;                       // M x K, replicated
    GmTensor b;                       // K x N/W (DN): this rank's columns of B
    GmTensor bias;                    // the whole bias vector (when bias != None)
    BiasKind bias_kind = BiasKind::None;
    int base_m = 0;
    int base_n = 0;
    int row0 = 0;                     // first global row of this rank's block (for an M bias)
    int col0 = 0;                     // first global column of this rank's block (for an N bias)
    std::vector<GmTensor> out_block;  // this rank's block in every rank's output (M x N/W)
    std::optional<SignalAddr> ready;  // per-tile ready flags on this rank (overlapping variants)
    int comm_tile_m = 0;
    int comm_tile_n = 0;
    bool skip_last_k_panel = false;   // fault: each tile misses its last K panel
    int skip_peer = -1;               // fault: this peer never receives the block

    GemmGrid grid() const { return GemmGrid(a, b, base_m, base_n); }
    // Under a stream_k/hybrid schedule of `blocks` blocks: the GEMM part, its partials and
    // counters at `counters`/`partials` of the rank's stream-K workspace (op.cpp).
    StreamKGemm stream_k(GemmScheduleKind kind, int blocks, GmTensor partials, SignalAddr counters) const;
    // Where a finished tile goes: every rank's output (peers first, in the order after this
    // rank; fused_sequential), or the own output and its ready flag (when `ready` is set).
    TileSink to_every_rank() const;
    TileSink to_own_output() const;
    collectives::TileScatter scatter() const;
};

// What every op fills the same way from its run: this rank, its A, B and bias, the tile, the comm
// tile (comm_tile_knobs.hpp) and the faults (skip_last_k_panel; skip_peer: the next rank). The
// op then says where its block is (row0, col0, out_block) and, when it overlaps, sets `ready`.
GemmBlockArgs block_args_of(const OpParams& p, const RankTensors& t, int rank);

// The GEMM (AIC): tiles data-parallel over `blocks` blocks, stored into the own output (and
// flagged when args.ready is set).
KernelLaunch make_block_gemm_kernel(const std::string& name, const GemmBlockArgs& args, int blocks);
// fused_sequential: the GEMM storing every finished tile into every rank's output.
KernelLaunch make_block_fused_sequential_kernel(const std::string& name, const GemmBlockArgs& args, int blocks);
// specialized: one MIX kernel of total_blocks clusters, the first gemm_blocks computing.
KernelLaunch make_block_specialized_kernel(const std::string& name, const GemmBlockArgs& args, int gemm_blocks,
                                          int total_blocks);
// specialized under stream_k/hybrid: the first gemm_blocks clusters run the stream-K GEMM
// (`sk`'s schedule has gemm_blocks blocks; their AIVs do the fix-ups), the rest scatter.
KernelLaunch make_block_specialized_stream_k_kernel(const std::string& name, const GemmBlockArgs& args, const StreamKGemm& sk,
                                                    int total_blocks);

}  // namespace tandem::kernels
