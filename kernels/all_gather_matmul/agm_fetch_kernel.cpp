// The staged fetcher (AIV) of all_gather_matmul, Iris's HBM-buffer kernel: fetcher blocks copy
// the peers' shards (each in its owner's window) into this rank's staging buffer (the gathered
// buffer), and raise one local flag per group of k_per_flag K tiles of a (source, row tile), so
// the GEMM blocks can start on a group as soon as it has landed. Groups go in the consumer's
// order (row tile by row tile, then source, then K), dealt round-robin over the fetcher blocks.
// `stages` UB buffers rotate, so up to stages - 1 remote loads are in flight while a store runs.
// A flag is raised only after a pipe barrier: the group's stores are complete before it.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "kernels/all_gather_matmul/agm_kernels.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

namespace {

Task agm_fetch(BlockCtx& blk, AgmArgs a) {
    const AgmShape& s = a.shape;
    const AgmWindow w = a.window();
    const int me = a.my_rank;
    const int peers = s.ranks - 1;
    std::vector<Tile*> ubTile;
    for (int i = 0; i < a.stages; ++i) {
        ubTile.push_back(&blk.alloc_tile(MemKind::UB, s.base_m, s.k_tile(), s.dtype, fmt::format("ubTile[{}]", i)));
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
    }
    const GmTensor staging = a.gathered(me);
    int buf = 0;
    const int items = s.m_tiles() * peers * s.k_groups();
    for (int item = blk.block_idx(); item < items; item += blk.block_num()) {
        const int mt = item / (peers * s.k_groups());
        const int src = (me + 1 + item / s.k_groups() % peers) % s.ranks;
        const int group = item % s.k_groups();
        const GmTensor remote = a.gathered(src);
        const int ktBegin = group * s.k_per_flag;
        const int ktEnd = std::min(ktBegin + s.k_per_flag, s.k_tiles());
        for (int kt = ktBegin; kt < ktEnd; ++kt) {
            if (a.fault == AgmFault::SkipStagedCopy && kt == ktEnd - 1) continue;
            const int row = mt * s.base_m;
            const int col = src * s.k_shard() + kt * s.k_tile();
            wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
            co_await TLOAD(*ubTile[static_cast<std::size_t>(buf)], remote.sub(row, col, s.base_m, s.k_tile()));
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            co_await TSTORE(staging.sub(row, col, s.base_m, s.k_tile()), *ubTile[static_cast<std::size_t>(buf)]);
            set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
            buf = (buf + 1) % a.stages;
        }
        pipe_barrier(blk, PIPE_ALL);  // the group is in the staging buffer before its flag
        TNOTIFY(blk, w.flag(me, a.window_base(me), src, mt, group), 1, NotifyOp::Set);
    }
    for (int i = 0; i < a.stages; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
}

}  // namespace

KernelLaunch make_agm_fetch_kernel(const AgmArgs& args, int blocks) {
    return KernelLaunch{"AllGatherMatmulFetchKernel", CoreType::AIV, blocks,
                        [args](BlockCtx& blk) { return agm_fetch(blk, args); }};
}

}  // namespace tandem::kernels
