// GemmComputeKernel (AIC), as published: block b computes its contiguous range of linear tiles
// in the boustrophedon order; each tile is the K loop of the shared tile pipeline (baseK =
// base_n / 4 = 64, one TLOAD of a 128 x 256 A panel and a 256 x 256 B panel into L1 every 4th
// step, both double-buffered; TEXTRACT into double-buffered L0A/L0B; TMATMUL then TMATMUL_ACC),
// stored from L0C through FIX with the cast fp32 -> fp16 into gemm_output. Then
// pipe_barrier(PIPE_ALL), so the tile is in GM (and the pipes idle) before the tile index is
// published on the block's ready queue: the next tile's loads do not start until then.
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"

namespace tandem::kernels {

GmTensor AscendArArgs::tile_of(const GmTensor& matrix, int g) const {
    const TilePos p = tiling.grid_position(g);
    const AscendArShape& s = tiling.shape();
    return matrix.sub(p.mi * s.base_m, p.ni * s.base_n, s.base_m, s.base_n);
}

namespace {

Task gemm_compute(BlockCtx& blk, AscendArArgs a) {
    const AscendArTiling& t = a.tiling;
    const AscendArShape& s = t.shape();
    GemmTilePipeline pipe(blk, s.base_m, s.base_n);
    const GemmGrid grid(a.a, a.b, s.base_m, s.base_n);
    const int kEnd = a.fault == AscendArFault::SkipLastKTile ? grid.k_panels - 1 : grid.k_panels;
    const SpscQueue readyQueue = a.queue(blk.block_idx());
    const int first = t.block_first(blk.block_idx());
    const int count = t.block_count(blk.block_idx());
    for (int slot = 0; slot < count; ++slot) {
        const int tileIdx = t.grid_index(first + slot);  // the row-major id of the swizzled tile
        co_await compute_tile(pipe, grid, tileIdx, 0, kEnd);
        co_await pipe.store(a.tile_of(a.gemm_output, tileIdx));  // FIX: fp32 -> fp16
        pipe_barrier(blk, PIPE_ALL);  // the fp16 tile is in GM before it is announced
        spsc_enqueue(blk, readyQueue, slot, tileIdx);
    }
    pipe.drain();
}

}  // namespace

KernelLaunch make_ascend_compute_kernel(const AscendArArgs& args) {
    return KernelLaunch{"GemmComputeKernel", CoreType::AIC, args.tiling.shape().compute_blocks,
                        [args](BlockCtx& blk) { return gemm_compute(blk, args); }};
}

}  // namespace tandem::kernels
