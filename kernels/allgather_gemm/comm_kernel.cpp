// The communication kernel (AIV). The published RingCommStreamingKernel sends each tile of the
// local A slice straight to every peer (full mesh) with a serial TPUT, then signals the chunk:
// a pipe barrier and fence, then TNOTIFY atomic adds on the chunk's flag and on the peer's
// summary counter for this source. The forwarding ring (Tandem's variant for ring topologies)
// sends only to the next rank, which forwards every chunk it receives until it has gone round.
#include <algorithm>

#include "kernels/allgather_gemm/allgather_gemm.hpp"
#include "kernels/common/int_math.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

namespace {

// Chunk `chunk` of source `src` is in `dst`'s window: its flag and the peer's summary counter.
void signal_chunk(BlockCtx& blk, const AgGemmArgs& a, int src, int dst, int chunk) {
    TNOTIFY(blk, a.window.flags.flag(dst, a.window_base(dst), src, chunk), 1, NotifyOp::AtomicAdd);
    TNOTIFY(blk, a.window.flags.summary(dst, a.window_base(dst), src), 1, NotifyOp::AtomicAdd);
}

// Send chunk `chunk` of source `src`'s slice from this rank's window to `dst`'s window, then
// signal it there.
Task send_chunk(BlockCtx& blk, const AgGemmArgs& a, Tile& ubTile, int src, int dst, int chunk) {
    const AgGemmTiling& t = a.tiling;
    if (a.flag_before_data) signal_chunk(blk, a, src, dst, chunk);  // the test-only fault
    const GmTensor localA = a.a_in_window(a.my_rank);
    const GmTensor peerA = a.a_in_window(dst);
    const int sliceRow0 = src * t.rows_per_rank;
    for (int tile = t.chunk_first_tile(chunk); tile < t.chunk_end_tile(chunk); ++tile) {
        const int row = sliceRow0 + (tile / t.k_tiles) * t.shape.base_m;
        const int col = (tile % t.k_tiles) * t.shape.base_n;
        co_await TPUT(peerA.sub(row, col, t.shape.base_m, t.shape.base_n),
                      localA.sub(row, col, t.shape.base_m, t.shape.base_n), ubTile);
    }
    if (a.flag_before_data) co_return;
    pipe_barrier(blk, PIPE_ALL);  // the full pipe barrier and the memory fence: the chunk's data
    dsb(blk);                     // acknowledged by the peer before its flag
    signal_chunk(blk, a, src, dst, chunk);
}

// Block 0 first marks this rank's own chunks ready in its own window.
void mark_local_ready(BlockCtx& blk, const AgGemmArgs& a) {
    const int me = a.my_rank;
    for (int c = 0; c < a.tiling.num_chunks; ++c)
        TNOTIFY(blk, a.window.flags.flag(me, a.window_base(me), me, c), 1, NotifyOp::Set);
    TNOTIFY(blk, a.window.flags.summary(me, a.window_base(me), me), a.tiling.num_chunks, NotifyOp::AtomicAdd);
}

Task comm_mesh(BlockCtx& blk, AgGemmArgs a) {
    const AgGemmTiling& t = a.tiling;
    Tile& ubPing = blk.alloc_tile(MemKind::UB, t.shape.base_m, t.shape.base_n, DType::F16, "ubPing");
    blk.alloc_tile(MemKind::UB, t.shape.base_m, t.shape.base_n, DType::F16, "ubPong");  // allocated, unused (as published)
    if (blk.block_idx() == 0) mark_local_ready(blk, a);
    const int ranks = t.shape.ranks;
    const int peers = ranks - 1;
    const int blocks = blk.block_num();
    const int me = a.my_rank;
    auto dest_rank = [&](int destIdx) { return destIdx < me ? destIdx : destIdx + 1; };  // DestIdxToRank
    if (blocks >= peers) {
        // Many blocks: a contiguous range of chunks per block, blocksPerDest blocks per peer.
        const int blocksPerDest = blocks / peers;
        const int destIdx = blk.block_idx() / blocksPerDest;
        if (destIdx >= peers) co_return;  // blocks past (n-1)*blocksPerDest idle
        const int chunksPerBlock = ceil_div(t.num_chunks, blocksPerDest);
        const int first = (blk.block_idx() % blocksPerDest) * chunksPerBlock;
        const int last = std::min(first + chunksPerBlock, t.num_chunks);
        for (int c = first; c < last; ++c) co_await send_chunk(blk, a, ubPing, me, dest_rank(destIdx), c);
    } else {
        // Few blocks: work items (destination, chunk) dealt round-robin.
        for (int w = blk.block_idx(); w < peers * t.num_chunks; w += blocks)
            co_await send_chunk(blk, a, ubPing, me, dest_rank(w / t.num_chunks), w % t.num_chunks);
    }
}

Task comm_ring(BlockCtx& blk, AgGemmArgs a) {
    const AgGemmTiling& t = a.tiling;
    Tile& ubPing = blk.alloc_tile(MemKind::UB, t.shape.base_m, t.shape.base_n, DType::F16, "ubPing");
    if (blk.block_idx() == 0) mark_local_ready(blk, a);
    const int ranks = t.shape.ranks;
    const int me = a.my_rank;
    const int next = (me + 1) % ranks;
    // Each rank passes n-1 slices to its right neighbour: its own, then those of me-1, me-2, ...
    // (every slice except next's own). Work items (hop, chunk) are dealt round-robin over blocks
    // in hop order, so a block forwards a chunk only after it has arrived here.
    const int hops = ranks - 1;
    for (int w = blk.block_idx(); w < hops * t.num_chunks; w += blk.block_num()) {
        const int hop = w / t.num_chunks;
        const int chunk = w % t.num_chunks;
        const int src = (me - hop + ranks) % ranks;
        if (src != me) co_await TWAIT(blk, a.window.flags.flag(me, a.window_base(me), src, chunk), CmpOp::GE, 1);
        co_await send_chunk(blk, a, ubPing, src, next, chunk);
    }
}

}  // namespace

KernelLaunch make_comm_kernel(const AgGemmArgs& args, int comm_blocks) {
    if (args.comm_mode == AgCommMode::Ring)
        return KernelLaunch{"AllGatherRingForwardKernel", CoreType::AIV, comm_blocks,
                            [args](BlockCtx& blk) { return comm_ring(blk, args); }};
    return KernelLaunch{"RingCommStreamingKernel", CoreType::AIV, comm_blocks,
                        [args](BlockCtx& blk) { return comm_mesh(blk, args); }};
}

}  // namespace tandem::kernels
