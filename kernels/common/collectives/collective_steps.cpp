#include "kernels/common/collectives/collective_steps.hpp"

namespace tandem::kernels::collectives::steps {

namespace {
int mod(int v, int n) { return ((v % n) + n) % n; }

// The k-th peer (k = 0 .. W-2) a work unit `spread` of rank `me` writes to. The order is rotated
// by the unit (a block, a tile) so that at any moment a rank's blocks write to all its peers at
// once: in the same order for every block they would all queue on the link to me+1 while the
// others idle.
int peer(int me, int W, int k, int spread) { return (me + 1 + (k + spread) % (W - 1)) % W; }
}  // namespace

Task mesh_push_partials(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int b = blk.block_idx();
    for (int k = 0; k < W - 1; ++k) {
        const int q = peer(me, W, k, b);
        const Range s = a.layout.slice(q);
        for (int j = b; j < s.count; j += a.layout.blocks) {
            co_await ub.load(a.data_tile(me, s.first + j));
            co_await ub.store(a.inbox_tile(q, me, j));
            ub.finish_item();
        }
    }
    pipe_barrier(blk, PIPE_ALL);
    for (int k = 1; k < W; ++k) TNOTIFY(blk, a.reduce_flag((me + k) % W, me, b), 1, NotifyOp::Set);
}

Task mesh_reduce_own(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, bool broadcast) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int b = blk.block_idx();
    for (int k = 1; k < W; ++k) co_await TWAIT(blk, a.reduce_flag(me, (me + k) % W, b), CmpOp::GE, 1);
    const Range s = a.layout.slice(me);
    for (int j = b; j < s.count; j += a.layout.blocks) {
        const int i = s.first + j;
        co_await ub.load(a.data_tile(me, i));
        for (int p = 0; p < W; ++p)
            if (p != me) co_await ub.add(a.inbox_tile(me, p, j));
        co_await ub.store(a.data_tile(me, i));
        if (broadcast)
            for (int k = 0; k < W - 1; ++k) co_await ub.store(a.data_tile(peer(me, W, k, b + j), i));
        ub.finish_item();
    }
    if (broadcast) {
        pipe_barrier(blk, PIPE_ALL);
        for (int k = 1; k < W; ++k) TNOTIFY(blk, a.gather_flag((me + k) % W, me, b), 1, NotifyOp::Set);
    }
}

Task mesh_broadcast_own(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int b = blk.block_idx();
    const Range s = a.layout.slice(me);
    for (int j = b; j < s.count; j += a.layout.blocks) {
        co_await ub.load(a.data_tile(me, s.first + j));
        for (int k = 0; k < W - 1; ++k) co_await ub.store(a.data_tile(peer(me, W, k, b + j), s.first + j));
        ub.finish_item();
    }
    pipe_barrier(blk, PIPE_ALL);
    for (int k = 1; k < W; ++k) TNOTIFY(blk, a.gather_flag((me + k) % W, me, b), 1, NotifyOp::Set);
}

Task mesh_wait_gathered(BlockCtx& blk, const CollectiveArgs& a) {
    const int W = a.layout.ranks;
    for (int k = 1; k < W; ++k)
        co_await TWAIT(blk, a.gather_flag(a.rank, (a.rank + k) % W, blk.block_idx()), CmpOp::GE, 1);
}

Task ring_reduce_scatter(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, bool send_reduced) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int next = (me + 1) % W;
    const int b = blk.block_idx();
    for (int s = 0; s < W; ++s) {
        const int chunk = mod(me - 1 - s, W);  // s == W-1: chunk `me`, now complete
        const Range sl = a.layout.slice(chunk);
        if (s > 0) co_await TWAIT(blk, a.reduce_flag(me, s - 1, b), CmpOp::GE, 1);
        for (int j = b; j < sl.count; j += a.layout.blocks) {
            const int i = sl.first + j;
            co_await ub.load(a.data_tile(me, i));
            if (s > 0) co_await ub.add(a.inbox_tile(me, s - 1, j));
            if (s < W - 1) {
                co_await ub.store(a.inbox_tile(next, s, j));
            } else {
                co_await ub.store(a.data_tile(me, i));
                if (send_reduced) co_await ub.store(a.data_tile(next, i));
            }
            ub.finish_item();
        }
        if (s < W - 1) {
            pipe_barrier(blk, PIPE_ALL);
            TNOTIFY(blk, a.reduce_flag(next, s, b), 1, NotifyOp::Set);
        }
    }
    if (send_reduced) {
        pipe_barrier(blk, PIPE_ALL);
        TNOTIFY(blk, a.gather_flag(next, 0, b), 1, NotifyOp::Set);
    }
}

Task ring_all_gather(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, int first_step) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int next = (me + 1) % W;
    const int b = blk.block_idx();
    for (int s = first_step; s < W - 1; ++s) {
        const Range sl = a.layout.slice(mod(me - s, W));
        if (s > 0) co_await TWAIT(blk, a.gather_flag(me, s - 1, b), CmpOp::GE, 1);  // chunk me-s arrived
        for (int j = b; j < sl.count; j += a.layout.blocks) {
            co_await ub.load(a.data_tile(me, sl.first + j));
            co_await ub.store(a.data_tile(next, sl.first + j));
            ub.finish_item();
        }
        pipe_barrier(blk, PIPE_ALL);
        TNOTIFY(blk, a.gather_flag(next, s, b), 1, NotifyOp::Set);
    }
    co_await TWAIT(blk, a.gather_flag(me, W - 2, b), CmpOp::GE, 1);  // the last chunk, me+1, arrived
}

}  // namespace tandem::kernels::collectives::steps
