#include "kernels/matmul_all_reduce/ascend_subtile/ag_drain.hpp"

#include "kernels/matmul_all_reduce/ascend_subtile/fences.hpp"

namespace tandem::kernels {

namespace {
constexpr int kAgEvent = 2;  // the AG buffer's MTE2 <-> MTE3 event id (RS uses 0 and 1)
}

AgDrain::AgDrain(BlockCtx& blk, const SubtileArArgs& a, Tile& ub)
    : blk_(blk), a_(a), ub_(ub), assigned_(a.tiling.ag_assigned(a.my_rank, blk.block_idx())),
      sent_(assigned_.size(), false) {}

Task AgDrain::drain_ready(bool& did) {
    did = false;
    const int n = static_cast<int>(assigned_.size());
    bool fenced = false;
    int lastHit = -1;
    for (int i = 0; i < n; ++i) {
        const int idx = (cursor_ + i) % n;
        if (sent_[static_cast<std::size_t>(idx)]) continue;
        const int l = assigned_[static_cast<std::size_t>(idx)];
        const bool ready = co_await TTEST(blk_, a_.subtile_ready(a_.my_rank, l), CmpOp::GE, a_.tiling.shape().ranks);
        if (!ready) continue;
        if (!fenced) {
            pipe_all_then_dsb(blk_);  // acquire, once per pass
            fenced = true;
        }
        co_await transfer_to_all(l);
        sent_[static_cast<std::size_t>(idx)] = true;
        ++completed_;
        ++acks_;
        lastHit = idx;
        did = true;
    }
    if (lastHit >= 0) cursor_ = (lastHit + 1) % n;
}

// AgTransferSubtileToAll + AgTransferRows: fully serial, no ping/pong, one load per peer.
Task AgDrain::transfer_to_all(int l) {
    const SubtileArTiling& t = a_.tiling;
    const int tile = t.tile_of_local(a_.my_rank, l);
    const int stripe = t.stripe_of_local(l);
    const GmTensor src = a_.subtile_of(a_.reduced_output[static_cast<std::size_t>(a_.my_rank)], tile, stripe);
    for (int round = 0; round < t.shape().ranks - 1; ++round) {
        const int peer = t.ag_peer(a_.my_rank, l, round);
        co_await TLOAD(ub_, src);
        set_flag(blk_, PIPE_MTE2, PIPE_MTE3, kAgEvent);
        wait_flag(blk_, PIPE_MTE2, PIPE_MTE3, kAgEvent);
        co_await TSTORE(a_.subtile_of(a_.reduced_output[static_cast<std::size_t>(peer)], tile, stripe), ub_);
        set_flag(blk_, PIPE_MTE3, PIPE_MTE2, kAgEvent);
        wait_flag(blk_, PIPE_MTE3, PIPE_MTE2, kAgEvent);
    }
}

Task AgDrain::wait_summary() {
    co_await TWAIT(blk_, a_.ag_summary(a_.my_rank, blk_.block_idx()), CmpOp::GE, acks_ + 1);
}

}  // namespace tandem::kernels
