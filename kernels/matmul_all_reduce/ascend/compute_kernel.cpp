// GemmComputeKernel (AIC), as published, in both versions of the example (the newer one,
// ascend_subtile/, only splits the tiles over the blocks another way): block b computes its
// contiguous range of linear tiles in the boustrophedon order; each tile is the K loop of the
// shared tile pipeline (baseK = base_n / 4 = 64, one TLOAD of a 128 x 256 A panel and a
// 256 x 256 B panel into L1 every 4th step, both double-buffered; TEXTRACT into double-buffered
// L0A/L0B; TMATMUL then TMATMUL_ACC), stored from L0C through FIX with the cast fp32 -> fp16 into
// gemm_output. Then pipe_barrier(PIPE_ALL), so the tile is in GM (and the pipes idle) before its
// row-major id (mi * nTiles + ni of its swizzled place) is published on the block's ready queue:
// the next tile's loads do not start until then.
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"

namespace tandem::kernels {

GmTensor AscendArArgs::tile_of(const GmTensor& matrix, int g) const {
    const TilePos p = tiling.grid_position(g);
    const AscendArShape& s = tiling.shape();
    return matrix.sub(p.mi * s.base_m, p.ni * s.base_n, s.base_m, s.base_n);
}

namespace {

Task gemm_compute(BlockCtx& blk, GemmComputeJob job) {
    const AscendArTiling& t = job.tiling;
    const AscendArShape& s = t.shape();
    GemmTilePipeline pipe(blk, s.base_m, s.base_n);
    const GemmGrid grid(job.a, job.b, s.base_m, s.base_n);
    const int kEnd = job.skip_last_k_tile ? grid.k_panels - 1 : grid.k_panels;
    const SpscQueue readyQueue = job.queues.queue(job.my_rank, job.queue_base, blk.block_idx());
    const int first = job.first[static_cast<std::size_t>(blk.block_idx())];
    const int count = job.count[static_cast<std::size_t>(blk.block_idx())];
    for (int slot = 0; slot < count; ++slot) {
        const int tileIdx = t.grid_index(first + slot);  // the row-major id of the swizzled tile
        const TilePos p = t.grid_position(tileIdx);
        co_await compute_tile(pipe, grid, tileIdx, 0, kEnd);
        co_await pipe.store(job.gemm_output.sub(p.mi * s.base_m, p.ni * s.base_n, s.base_m, s.base_n));  // FIX: fp32 -> fp16
        pipe_barrier(blk, PIPE_ALL);  // the fp16 tile is in GM before it is announced
        // The published enqueue writes data[slot], flushes, then count (two dcci): the two
        // signal writes, whose flush is in the local atomic latency they become visible after.
        spsc_enqueue(blk, readyQueue, slot, tileIdx);
    }
    pipe.drain();
}

}  // namespace

KernelLaunch make_gemm_compute_kernel(const GemmComputeJob& job) {
    return KernelLaunch{"GemmComputeKernel", CoreType::AIC, job.tiling.shape().compute_blocks,
                        [job](BlockCtx& blk) { return gemm_compute(blk, job); }};
}

KernelLaunch make_ascend_compute_kernel(const AscendArArgs& args) {
    const AscendArTiling& t = args.tiling;
    GemmComputeJob job{t, args.a, args.b, args.gemm_output, args.queues, args.my_rank, args.queue_base, {}, {},
                       args.fault == AscendArFault::SkipLastKTile};
    for (int b = 0; b < t.shape().compute_blocks; ++b) {
        job.first.push_back(t.block_first(b));
        job.count.push_back(t.block_count(b));
    }
    return make_gemm_compute_kernel(job);
}

}  // namespace tandem::kernels
