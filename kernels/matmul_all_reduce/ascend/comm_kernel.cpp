// GemmCommAllKernel (AIV), as published: three phases in one kernel.
//   1. Reduce-scatter by atomic add: AIV block b drains AIC block b's ready queue only (a strict
//      1:1 binding; blocks past the compute blocks have no queue). Each tile index is dequeued
//      as it arrives; the whole 128 x 256 fp16 tile is loaded from gemm_output into UB and
//      stored with atomic add into the owner's reduced_output (owner = tile % ranks; through
//      the link unless the owner is this rank). Ping/pong UB tiles overlap one tile's TLOAD with
//      the previous tile's store. The target adds: there is no separate reduce step.
//   2. The device barrier across ranks (kernels/common/device_barrier.hpp).
//   3. All-gather flattened by rows: the block's segments of (owned tile, destination) rows are
//      loaded from this rank's reduced_output into ONE UB buffer and stored into the destination's
//      reduced_output, fully serial (MTE2 -> MTE3 -> MTE2 flags, no ping/pong).
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"
#include "sim/isa/isa.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {

namespace {

Task reduce_scatter(BlockCtx& blk, const AscendArArgs& a, Tile* ubTile[2]) {
    const AscendArTiling& t = a.tiling;
    const int block = blk.block_idx();
    const SpscQueue readyQueue = a.queue(block);
    const int first = t.block_first(block);
    const int count = t.block_count(block);
    for (int i = 0; i < 2; ++i) set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);  // both UB tiles free
    for (int head = 0; head < count; ++head) {
        const int tileIdx = t.grid_index(first + head);  // the row-major id its compute block enqueues
        co_await spsc_dequeue(blk, readyQueue, head, tileIdx);
        const int buf = head % 2;
        Tile& ub = *ubTile[buf];
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);  // its previous store has read it
        co_await TLOAD(ub, a.tile_of(a.gemm_output, tileIdx));
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        const bool dropped = a.fault == AscendArFault::SkipPartial && block == 0 && head == count - 1;
        if (!dropped) {
            const GmTensor& target = a.reduced_output[static_cast<std::size_t>(t.owner(tileIdx))];
            co_await TSTORE(a.tile_of(target, tileIdx), ub, AtomicType::AtomicAdd);
        }
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
    }
    for (int i = 0; i < 2; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
}

// PTO tiles carry a valid row count below their allocated rows: a short segment uses the first
// `rows` rows of the UB buffer.
void set_valid_rows(Tile& tile, int rows, int allocated_rows) {
    if (rows < 1 || rows > allocated_rows) {
        throw SimError("all-gather segment of " + std::to_string(rows) + " rows does not fit the UB tile '" + tile.name +
                       "' of " + std::to_string(allocated_rows) + " rows");
    }
    tile.rows = rows;
}

Task all_gather_rows(BlockCtx& blk, const AscendArArgs& a, Tile& ub) {
    const AscendArTiling& t = a.tiling;
    const AscendArShape& s = t.shape();
    const GmTensor& mine = a.reduced_output[static_cast<std::size_t>(a.my_rank)];
    for (const AgSegment& seg : t.ag_segments(a.my_rank, blk.block_idx())) {
        const GmTensor src = a.tile_of(mine, seg.tile).sub(seg.row0, 0, seg.rows, s.base_n);
        const GmTensor dst =
            a.tile_of(a.reduced_output[static_cast<std::size_t>(seg.dest)], seg.tile).sub(seg.row0, 0, seg.rows, s.base_n);
        set_valid_rows(ub, seg.rows, s.base_m);
        co_await TLOAD(ub, src);
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
        co_await TSTORE(dst, ub);
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    }
    set_valid_rows(ub, s.base_m, s.base_m);
}

Task gemm_comm_all(BlockCtx& blk, AscendArArgs a) {
    const AscendArShape& s = a.tiling.shape();
    Tile* ubTile[2] = {&blk.alloc_tile(MemKind::UB, s.base_m, s.base_n, DType::F16, "ubPing"),
                       &blk.alloc_tile(MemKind::UB, s.base_m, s.base_n, DType::F16, "ubPong")};
    if (blk.block_idx() < s.compute_blocks) co_await reduce_scatter(blk, a, ubTile);
    co_await device_barrier(blk, a.barrier);
    co_await all_gather_rows(blk, a, *ubTile[0]);
}

}  // namespace

KernelLaunch make_ascend_comm_kernel(const AscendArArgs& args) {
    return KernelLaunch{"GemmCommAllKernel", CoreType::AIV, args.tiling.shape().comm_blocks,
                        [args](BlockCtx& blk) { return gemm_comm_all(blk, args); }};
}

}  // namespace tandem::kernels
