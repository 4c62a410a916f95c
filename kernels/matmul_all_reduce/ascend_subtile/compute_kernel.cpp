// GemmComputeKernel (AIC) of the newer version: the older kernel (ascend/compute_kernel.cpp)
// with the balanced split: block b computes its contiguous range of linear tiles (base + 1 or
// base of them) in the boustrophedon order; each tile is the shared K loop (one TLOAD of a
// 128 x 256 A panel and a 256 x 256 B panel into L1 every 4th step, TEXTRACT into L0A/L0B,
// TMATMUL then TMATMUL_ACC), stored from L0C through FIX with the cast fp32 -> fp16 into
// gemm_output. Then pipe_barrier(PIPE_ALL), so the tile is in GM (and the pipes idle) before
// its row-major id (mi * nTiles + ni of its swizzled place) goes on the block's ready queue: the
// next tile's loads wait for that.
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"

namespace tandem::kernels {

namespace {

Task gemm_compute(BlockCtx& blk, SubtileArArgs a) {
    const SubtileArTiling& t = a.tiling;
    const AscendArShape& s = t.shape();
    GemmTilePipeline pipe(blk, s.base_m, s.base_n);
    const GemmGrid grid(a.a, a.b, s.base_m, s.base_n);
    const int kEnd = a.fault == SubtileArFault::SkipLastKTile ? grid.k_panels - 1 : grid.k_panels;
    const SpscQueue readyQueue = a.queue(blk.block_idx());
    const int first = t.block_first(blk.block_idx());
    const int count = t.block_count(blk.block_idx());
    for (int slot = 0; slot < count; ++slot) {
        const int tileIdx = t.tile_id(first + slot);  // the row-major id of the swizzled place
        co_await compute_tile(pipe, grid, tileIdx, 0, kEnd);
        co_await pipe.store(a.tile_of(a.gemm_output, tileIdx));  // FIX: fp32 -> fp16
        pipe_barrier(blk, PIPE_ALL);  // the fp16 tile is in GM before it is announced
        // The published enqueue writes data[slot], flushes, then count (two dcci): the two
        // signal writes, whose flush is in the local atomic latency they become visible after.
        spsc_enqueue(blk, readyQueue, slot, tileIdx);
    }
    pipe.drain();
}

}  // namespace

KernelLaunch make_subtile_compute_kernel(const SubtileArArgs& args) {
    return KernelLaunch{"GemmComputeKernel", CoreType::AIC, args.tiling.shape().compute_blocks,
                        [args](BlockCtx& blk) { return gemm_compute(blk, args); }};
}

}  // namespace tandem::kernels
