#pragma once
// One comm block's reduce-scatter in the newer example (RsInitQueueState, RsPollQueues,
// RsTryProcessOneTile, RsProcessTileStripes, RsPipelineStep, RsPublishSubtileReady,
// RsFlushPipeline, RsWaitOnQueue):
//   * the block drains the ready queues b, b + Bc, ... round-robin; a poll TTESTs each queue that
//     still owes tiles once, from a cursor, and takes the first that has one;
//   * a dequeued tile is sent as its stripes (sub_m x base_n subtiles) in order, one ping/pong
//     step each: the step of subtile k issues the atomic-add store of subtile k - 1 (the
//     pending one), then the load of subtile k, then waits for both and publishes k - 1;
//   * so the tile's last stripe stays pending in UB until the block dequeues its next tile;
//     only the block's last tile is flushed at once;
//   * publishing a subtile: pipe_barrier(PIPE_ALL) + dsb, then two atomic-add TNOTIFYs to its
//     owner: subtile_ready[l] and ag_summary[Bc - 1 - l % Bc] (local atomics when self-owned).
#include <optional>
#include <vector>

#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

class RsPipeline {
public:
    // `ub`: the ping and pong UB tiles (sub_m x base_n fp16 each, at 0 and 32 KiB).
    RsPipeline(BlockCtx& blk, const SubtileArArgs& a, Tile* ub[2]);

    // All expected tiles sent and the pipeline flushed (true from the start without queues).
    bool done() const { return tiles_sent_ == expected_ && !pending_; }
    // At most one tile: `did` is set when one was dequeued and sent.
    Task try_process_one_tile(bool& did);
    // Nothing was ready: TWAIT on the count of the next queue (from the poll cursor) that still
    // owes tiles.
    Task wait_on_queue();

private:
    struct QueueState {
        SpscQueue queue;
        int first_tile = 0;  // the compute block's first linear tile (its ids follow the swizzle)
        int count = 0;       // tiles it makes
        int head = 0;        // tiles dequeued so far
    };
    struct Subtile {
        int tile = 0;  // row-major id
        int stripe = 0;
    };

    // One poll: the index of the queue a tile was found on, or -1.
    Task poll_queues(int& found);
    Task pipeline_step(Subtile cur);
    Task flush_pipeline();
    Task store(const Subtile& sub, int buf);
    void publish_ready(const Subtile& sub);
    GmTensor source(const Subtile& sub) const;

    BlockCtx& blk_;
    const SubtileArArgs& a_;
    Tile* ub_[2];
    std::vector<QueueState> queues_;
    int cursor_ = 0;  // round-robin start of the next poll
    int expected_ = 0;
    int tiles_sent_ = 0;
    int pp_count_ = 0;  // subtiles loaded so far: even ones use ping, odd ones pong
    int stores_ = 0;    // subtiles stored so far (for the SkipSubtileAdd fault)
    std::optional<Subtile> pending_;  // loaded, not yet stored
};

}  // namespace tandem::kernels
