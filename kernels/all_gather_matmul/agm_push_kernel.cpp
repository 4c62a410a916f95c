// The push producer (AIV) of all_gather_matmul, Iris's push model: each tile of this rank's
// shard A_r is loaded into UB once and stored into block `me` of every rank's inbox (the
// gathered buffer; its own included), then the tile's flag is raised at every rank with release
// semantics: pipe_barrier(PIPE_ALL) first, so the stores are complete at their targets before
// any flag is (a flag raised before its data is the failure class docs/SANITIZER.md names). Tiles go in
// the consumer's order (row tile by row tile), dealt round-robin over the producer blocks; two
// UB buffers let a tile's load overlap the previous tile's stores.
#include <algorithm>

#include <fmt/format.h>

#include "kernels/all_gather_matmul/agm_kernels.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

namespace {

Task agm_push(BlockCtx& blk, AgmArgs a) {
    const AgmShape& s = a.shape;
    const AgmWindow w = a.window();
    const int me = a.my_rank;
    Tile* ubTile[2];
    for (int i = 0; i < 2; ++i) {
        ubTile[i] = &blk.alloc_tile(MemKind::UB, s.base_m, s.k_tile(), s.dtype, fmt::format("ubTile[{}]", i));
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
    }
    // Work items are (tile, group of destinations): with fewer tiles than blocks a tile's
    // destinations are split over several blocks (each loads the tile, a local read), so every
    // producer block has work. Each (tile, destination) is stored and flagged by one block.
    const int tiles = s.m_tiles() * s.k_tiles();
    const int groups = std::max(1, std::min(s.ranks, blk.block_num() / std::max(1, tiles)));
    int buf = 0;
    for (int item = blk.block_idx(); item < tiles * groups; item += blk.block_num()) {
        const int tile = item / groups;
        const int group = item % groups;
        const int mt = tile / s.k_tiles();
        const int kt = tile % s.k_tiles();
        const int row = mt * s.base_m;
        const int col = me * s.k_shard() + kt * s.k_tile();
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        co_await TLOAD(*ubTile[buf], a.a_shard.sub(row, kt * s.k_tile(), s.base_m, s.k_tile()));
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        for (int i = group; i < s.ranks; i += groups) {
            if (a.fault == AgmFault::SkipInboxStore && tile == 0 && i == 1) continue;
            const int dst = (me + i) % s.ranks;
            co_await TSTORE(a.gathered(dst).sub(row, col, s.base_m, s.k_tile()), *ubTile[buf]);
        }
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        pipe_barrier(blk, PIPE_ALL);  // release: the stores are complete everywhere before the flags
        for (int i = group; i < s.ranks; i += groups) {
            const int dst = (me + i) % s.ranks;
            TNOTIFY(blk, w.flag(dst, a.window_base(dst), me, mt, kt), 1, NotifyOp::Set);
        }
        buf ^= 1;
    }
    for (int i = 0; i < 2; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
}

}  // namespace

KernelLaunch make_agm_push_kernel(const AgmArgs& args, int blocks) {
    return KernelLaunch{"AllGatherMatmulPushKernel", CoreType::AIV, blocks,
                        [args](BlockCtx& blk) { return agm_push(blk, args); }};
}

}  // namespace tandem::kernels
