// The compute kernel (AIC), AllGatherGemmComputeStreamingKernel as published. Work is split by
// base_m-row groups over the blocks. Phase 1 computes the local rows without waiting. Phase 2
// walks the remote row groups (sources in rank order); for each output tile it waits on the
// source's summary counter, then sweeps the chunks covering the row group and runs the K tiles
// of each chunk whose flag is set, so the K order of accumulation follows arrival order.
#include <vector>

#include "kernels/allgather_gemm/allgather_gemm.hpp"
#include "kernels/common/gemm_tile_pipeline.hpp"

namespace tandem::kernels {

namespace {

// One K tile (base_m x base_n of A, base_n x base_n of B) of the output tile (row0, ni).
Task accumulate_k_tile(GemmTilePipeline& pipe, const AgGemmArgs& a, int row0, int kt, int ni) {
    const AgGemmShape& s = a.tiling.shape;
    return pipe.accumulate(a.a_in_window(a.my_rank).sub(row0, kt * s.base_n, s.base_m, s.base_n),
                           a.b_matrix().sub(kt * s.base_n, ni * s.base_n, s.base_n, s.base_n));
}

Task store_tile(GemmTilePipeline& pipe, const AgGemmArgs& a, int row0, int ni) {
    const AgGemmShape& s = a.tiling.shape;
    return pipe.store(a.c_matrix().sub(row0, ni * s.base_n, s.base_m, s.base_n));
}

// Phase 1: a local row group, every K tile in order.
Task compute_local_tile(GemmTilePipeline& pipe, const AgGemmArgs& a, int mi, int ni) {
    const AgGemmTiling& t = a.tiling;
    const int row0 = mi * t.shape.base_m;
    int kEnd = t.k_tiles;
    if (a.fault == ComputeFault::SkipLastKTile) --kEnd;
    pipe.begin_tile();
    for (int kt = 0; kt < kEnd; ++kt) co_await accumulate_k_tile(pipe, a, row0, kt, ni);
    co_await store_tile(pipe, a, row0, ni);
}

// Phase 2: a remote row group of source `src`, consuming chunks as their flags are set.
Task compute_remote_tile(BlockCtx& blk, GemmTilePipeline& pipe, const AgGemmArgs& a, int mi, int ni) {
    const AgGemmTiling& t = a.tiling;
    const int me = a.my_rank;
    const std::int64_t myWindow = a.window_base(me);
    const int src = mi / t.local_row_groups;
    const int miLocal = mi % t.local_row_groups;
    const int row0 = mi * t.shape.base_m;
    const int tileBegin = miLocal * t.k_tiles;
    const int tileEnd = tileBegin + t.k_tiles;
    const int firstChunk = tileBegin / t.chunk_size;
    const int lastChunk = (tileEnd - 1) / t.chunk_size;
    const int chunks = lastChunk - firstChunk + 1;
    std::vector<bool> done(static_cast<std::size_t>(chunks), false);
    int processed = 0;
    const SignalAddr summary = a.window.flags.summary(me, myWindow, src);
    pipe.begin_tile();
    while (processed < chunks) {
        // Nothing new since we last looked: wait for the source's counter to move.
        if (!co_await TTEST(blk, summary, CmpOp::GT, processed))
            co_await TWAIT(blk, summary, CmpOp::GE, processed + 1);
        for (int i = 0; i < chunks; ++i) {
            if (done[static_cast<std::size_t>(i)]) continue;
            const int c = firstChunk + i;
            if (!co_await TTEST(blk, a.window.flags.flag(me, myWindow, src, c), CmpOp::GE, 1)) continue;
            const int from = std::max(t.chunk_first_tile(c), tileBegin);
            const int to = std::min(t.chunk_end_tile(c), tileEnd);
            for (int tile = from; tile < to; ++tile) {
                if (a.fault == ComputeFault::SkipLastKTile && tile == tileEnd - 1) continue;
                co_await accumulate_k_tile(pipe, a, row0, tile - tileBegin, ni);
            }
            done[static_cast<std::size_t>(i)] = true;
            ++processed;
        }
    }
    co_await store_tile(pipe, a, row0, ni);
}

Task compute_streaming(BlockCtx& blk, AgGemmArgs a) {
    const AgGemmTiling& t = a.tiling;
    GemmTilePipeline pipe(blk, t.shape.base_m, t.shape.base_n);
    const int core = blk.block_idx();
    const int blocks = blk.block_num();
    const int localStart = a.my_rank * t.local_row_groups;
    const int localEnd = localStart + t.local_row_groups;
    for (int mi = localStart + core; mi < localEnd; mi += blocks)
        for (int ni = 0; ni < t.n_tiles; ++ni) co_await compute_local_tile(pipe, a, mi, ni);
    for (int mi = core; mi < t.row_groups; mi += blocks) {
        if (mi >= localStart && mi < localEnd) continue;
        for (int ni = 0; ni < t.n_tiles; ++ni) co_await compute_remote_tile(blk, pipe, a, mi, ni);
    }
    pipe.drain();
}

}  // namespace

KernelLaunch make_compute_kernel(const AgGemmArgs& args, int compute_blocks) {
    return KernelLaunch{"AllGatherGemmComputeStreamingKernel", CoreType::AIC, compute_blocks,
                        [args](BlockCtx& blk) { return compute_streaming(blk, args); }};
}

}  // namespace tandem::kernels
