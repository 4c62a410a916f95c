#include "kernels/matmul_all_reduce/ascend_subtile/rs_pipeline.hpp"

#include <fmt/format.h>

#include "kernels/matmul_all_reduce/ascend_subtile/fences.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {

RsPipeline::RsPipeline(BlockCtx& blk, const SubtileArArgs& a, Tile* ub[2]) : blk_(blk), a_(a), ub_{ub[0], ub[1]} {
    const SubtileArTiling& t = a.tiling;
    for (int q : t.queues_of(blk.block_idx()))
        queues_.push_back(QueueState{a.queue(q), t.block_first(q), t.block_count(q), 0});
    expected_ = t.expected_tiles(blk.block_idx());
}

GmTensor RsPipeline::source(const Subtile& sub) const { return a_.subtile_of(a_.gemm_output, sub.tile, sub.stripe); }

// The reads are separate statements: GCC 12 miscompiles `if (!co_await A) ...` forms (see
// kernels/common/spsc_ready_queue.cpp).
Task RsPipeline::poll_queues(int& found) {
    found = -1;
    const int n = static_cast<int>(queues_.size());
    for (int i = 0; i < n; ++i) {
        const int qi = (cursor_ + i) % n;
        const QueueState& q = queues_[static_cast<std::size_t>(qi)];
        if (q.head == q.count) continue;  // this compute block has handed over all its tiles
        // The published poll also invalidates the cached queue word (dcci) first: one TTEST is a
        // cache invalidate plus a GM read (the profile's twait_poll_cycles).
        const bool ready = co_await TTEST(blk_, q.queue.count(), CmpOp::GE, q.head + 1);
        if (ready) {
            found = qi;
            cursor_ = (qi + 1) % n;
            co_return;
        }
    }
}

Task RsPipeline::try_process_one_tile(bool& did) {
    did = false;
    int qi = -1;
    co_await poll_queues(qi);
    if (qi < 0) co_return;
    QueueState& q = queues_[static_cast<std::size_t>(qi)];
    const int tile = a_.tiling.tile_id(q.first_tile + q.head);  // the row-major id the producer enqueues
    // data[head], one scalar read: a deterministic producer's value is known, a different one
    // is an error.
    const bool published = co_await TTEST(blk_, q.queue.slot(q.head), CmpOp::EQ, tile);
    if (!published) {
        throw SimError(fmt::format("ascend_subtile rank {} comm block {}: ready queue entry {} does not hold tile {} "
                                   "(the compute block published something else)",
                                   a_.my_rank, blk_.block_idx(), q.head, tile));
    }
    ++q.head;
    for (int s = 0; s < a_.tiling.subtiles_per_tile(); ++s) co_await pipeline_step(Subtile{tile, s});
    ++tiles_sent_;
    if (tiles_sent_ == expected_) co_await flush_pipeline();
    did = true;
}

Task RsPipeline::wait_on_queue() {
    const int n = static_cast<int>(queues_.size());
    for (int i = 0; i < n; ++i) {
        const QueueState& q = queues_[static_cast<std::size_t>((cursor_ + i) % n)];
        if (q.head == q.count) continue;
        co_await TWAIT(blk_, q.queue.count(), CmpOp::GE, q.head + 1);
        co_return;
    }
    throw SimError(fmt::format("ascend_subtile rank {} comm block {}: the reduce-scatter waits with no queue owing "
                               "a tile",
                               a_.my_rank, blk_.block_idx()));
}

Task RsPipeline::store(const Subtile& sub, int buf) {
    const bool dropped = a_.fault == SubtileArFault::SkipSubtileAdd && blk_.block_idx() == 0 && stores_ == 0;
    ++stores_;
    if (dropped) co_return;
    const int owner = a_.tiling.owner(sub.tile);
    const GmTensor target = a_.subtile_of(a_.reduced_output[static_cast<std::size_t>(owner)], sub.tile, sub.stripe);
    co_await TSTORE(target, *ub_[buf], AtomicType::AtomicAdd);  // through the link unless self-owned
}

void RsPipeline::publish_ready(const Subtile& sub) {
    if (a_.fault != SubtileArFault::ReadyBeforeStore) pipe_all_then_dsb(blk_);  // release: the add has landed
    const int owner = a_.tiling.owner(sub.tile);
    const int l = a_.tiling.local_id(sub.tile, sub.stripe);
    TNOTIFY(blk_, a_.subtile_ready(owner, l), 1, NotifyOp::AtomicAdd);
    TNOTIFY(blk_, a_.ag_summary(owner, a_.tiling.summary_block(l)), 1, NotifyOp::AtomicAdd);
}

// RsPipelineStep: the pending subtile's store overlaps only the load of `cur`; the fence of its
// publish then waits for both.
Task RsPipeline::pipeline_step(Subtile cur) {
    const int buf = pp_count_ % 2;  // ping for even, pong for odd; event id = buffer
    if (pp_count_ == 0) {
        co_await TLOAD(*ub_[buf], source(cur));
        set_flag(blk_, PIPE_MTE2, PIPE_MTE3, buf);
    } else {
        const Subtile prev = *pending_;
        const int prevBuf = 1 - buf;
        wait_flag(blk_, PIPE_MTE2, PIPE_MTE3, prevBuf);
        if (a_.fault == SubtileArFault::ReadyBeforeStore) publish_ready(prev);
        co_await store(prev, prevBuf);
        co_await TLOAD(*ub_[buf], source(cur));
        set_flag(blk_, PIPE_MTE3, PIPE_MTE2, prevBuf);
        set_flag(blk_, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk_, PIPE_MTE3, PIPE_MTE2, prevBuf);
        if (a_.fault != SubtileArFault::ReadyBeforeStore) publish_ready(prev);
    }
    pending_ = cur;
    ++pp_count_;
}

// RsFlushPipeline: the store half of a step, for the block's last subtile.
Task RsPipeline::flush_pipeline() {
    if (!pending_) co_return;
    const Subtile prev = *pending_;
    const int prevBuf = (pp_count_ - 1) % 2;
    wait_flag(blk_, PIPE_MTE2, PIPE_MTE3, prevBuf);
    if (a_.fault == SubtileArFault::ReadyBeforeStore) publish_ready(prev);
    co_await store(prev, prevBuf);
    set_flag(blk_, PIPE_MTE3, PIPE_MTE2, prevBuf);
    wait_flag(blk_, PIPE_MTE3, PIPE_MTE2, prevBuf);
    if (a_.fault != SubtileArFault::ReadyBeforeStore) publish_ready(prev);
    pending_.reset();
}

}  // namespace tandem::kernels
