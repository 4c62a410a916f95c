#include "kernels/common/collectives/all_gather_cols.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {

namespace {

SignalAddr step_counter(const AllGatherColsArgs& a, int rank, int step) {
    const SignalAddr& base = a.arrivals[static_cast<std::size_t>(rank)];
    return SignalAddr{base.rank, base.address + 4 * std::int64_t{step}};
}

Task ring_all_gather_cols(BlockCtx& blk, AllGatherColsArgs a) {
    const int ranks = static_cast<int>(a.gathered.size());
    if (ranks < 2) co_return;
    const int me = a.my_rank;
    const int next = (me + 1) % ranks;
    const GmTensor& mine = a.gathered[static_cast<std::size_t>(me)];
    const GmTensor& nextGathered = a.gathered[static_cast<std::size_t>(next)];
    const int colTiles = a.shard_cols / a.tile_cols;
    const int tiles = mine.rows() / a.tile_rows * colTiles;
    Tile* ubTile[2];
    for (int i = 0; i < 2; ++i) {
        ubTile[i] = &blk.alloc_tile(MemKind::UB, a.tile_rows, a.tile_cols, mine.dtype(), fmt::format("ubTile[{}]", i));
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);  // both buffers start free
    }
    int buf = 0;
    for (int s = 0; s < ranks - 1; ++s) {
        const int block = (me - s + ranks) % ranks;  // s = 0: the own shard; then what rank me-1 sent at s-1
        // Every block of rank me-1 has forwarded its share of `block` here (its step s-1 count).
        if (s > 0) co_await TWAIT(blk, step_counter(a, me, s - 1), CmpOp::GE, blk.block_num());
        for (int t = blk.block_idx(); t < tiles; t += blk.block_num()) {
            const int row = (t / colTiles) * a.tile_rows;
            const int col = block * a.shard_cols + (t % colTiles) * a.tile_cols;
            wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);  // the buffer's earlier store has read it
            co_await TLOAD(*ubTile[buf], mine.sub(row, col, a.tile_rows, a.tile_cols));
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            co_await TSTORE(nextGathered.sub(row, col, a.tile_rows, a.tile_cols), *ubTile[buf]);
            set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
            buf ^= 1;
        }
        pipe_barrier(blk, PIPE_ALL);  // this step's stores complete at rank me+1 before its count
        TNOTIFY(blk, step_counter(a, next, s), 1, NotifyOp::AtomicAdd);
    }
    for (int i = 0; i < 2; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
    // The last block, me+1's, has come round the ring (W-2 hops) into this rank.
    co_await TWAIT(blk, step_counter(a, me, ranks - 2), CmpOp::GE, blk.block_num());
}

Task all_gather_cols(BlockCtx& blk, AllGatherColsArgs a) {
    const int ranks = static_cast<int>(a.gathered.size());
    const int me = a.my_rank;
    const GmTensor& mine = a.gathered[static_cast<std::size_t>(me)];
    const int rowTiles = mine.rows() / a.tile_rows;
    const int colTiles = a.shard_cols / a.tile_cols;
    Tile* ubTile[2];
    for (int i = 0; i < 2; ++i) {
        ubTile[i] = &blk.alloc_tile(MemKind::UB, a.tile_rows, a.tile_cols, mine.dtype(), fmt::format("ubTile[{}]", i));
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);  // both buffers start free
    }
    // Work items are (tile, group of peers): with fewer tiles than blocks the peers of a tile
    // are split over several blocks (each loads the tile, a local read, and stores it to its
    // share of the peers), so every block has work, as HCCL spreads a small all-gather.
    const int tiles = rowTiles * colTiles;
    const int peers = ranks - 1;
    const int groups = std::max(1, std::min(peers, blk.block_num() / std::max(1, tiles)));
    int buf = 0;
    for (int item = blk.block_idx(); item < tiles * groups; item += blk.block_num()) {
        const int t = item / groups;
        const int group = item % groups;
        const int row = (t / colTiles) * a.tile_rows;
        const int col = me * a.shard_cols + (t % colTiles) * a.tile_cols;
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);  // the buffer's earlier stores have read it
        co_await TLOAD(*ubTile[buf], mine.sub(row, col, a.tile_rows, a.tile_cols));
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        for (int i = 1 + group; i <= peers; i += groups) {
            const int peer = (me + i) % ranks;
            co_await TSTORE(a.gathered[static_cast<std::size_t>(peer)].sub(row, col, a.tile_rows, a.tile_cols), *ubTile[buf]);
        }
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        buf ^= 1;
    }
    for (int i = 0; i < 2; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
    pipe_barrier(blk, PIPE_ALL);  // this block's stores complete at the peers before its counts
    for (int i = 1; i < ranks; ++i)
        TNOTIFY(blk, a.arrivals[static_cast<std::size_t>((me + i) % ranks)], 1, NotifyOp::AtomicAdd);
    // Every block of every peer has delivered here.
    co_await TWAIT(blk, a.arrivals[static_cast<std::size_t>(me)], CmpOp::GE, (ranks - 1) * blk.block_num());
}

}  // namespace

KernelLaunch make_all_gather_cols_kernel(const AllGatherColsArgs& args, int blocks) {
    const GmTensor& mine = args.gathered.at(static_cast<std::size_t>(args.my_rank));
    if (args.tile_rows <= 0 || args.tile_cols <= 0 || mine.rows() % args.tile_rows != 0 ||
        args.shard_cols % args.tile_cols != 0 || mine.cols() != args.shard_cols * static_cast<int>(args.gathered.size())) {
        throw SimError(fmt::format("all-gather of column shards on rank {}: {} is not {} shards of {} columns in whole "
                                   "{}x{} tiles",
                                   args.my_rank, mine.describe(), args.gathered.size(), args.shard_cols, args.tile_rows,
                                   args.tile_cols));
    }
    if (args.algo == collectives::CollectiveAlgo::Ring) {
        return KernelLaunch{"AllGatherColsRingKernel", CoreType::AIV, blocks,
                            [args](BlockCtx& blk) { return ring_all_gather_cols(blk, args); }};
    }
    return KernelLaunch{"AllGatherColsKernel", CoreType::AIV, blocks,
                        [args](BlockCtx& blk) { return all_gather_cols(blk, args); }};
}

int all_gather_cols_arrival_words(collectives::CollectiveAlgo algo, int ranks) {
    return algo == collectives::CollectiveAlgo::Ring ? std::max(1, ranks - 1) : 1;
}

}  // namespace tandem::kernels
