#pragma once
// One comm block's all-gather in the newer example (AgInitAssignedState,
// AgDrainReadyAssignedSubtiles, AgTransferSubtileToAll, AgTransferRows, AgWaitAssignedSummary):
//   * comm block b sends the owner-local subtile ids Bc - 1 - b + k * Bc of its rank and listens
//     on ag_summary[b];
//   * a drain pass visits every assigned id not yet sent once, from a cursor: a TTEST of the
//     local subtile_ready[l] >= ranks (every rank's atomic add landed, this rank's included);
//     at the pass's first hit one acquire fence (pipe_barrier(PIPE_ALL) + dsb); each hit is
//     sent at once; the cursor moves past the last hit;
//   * a send is ranks - 1 serial rounds, the first peer rotated by l, each round a TLOAD of the
//     subtile from the local reduced_output into the one AG UB buffer, MTE2 -> MTE3, a plain
//     TSTORE into the peer's reduced_output, MTE3 -> MTE2: the subtile is re-loaded per peer;
//   * idle after the reduce-scatter: TWAIT ag_summary[b] >= acks + 1, acks = subtiles sent. The
//     counter gains `ranks` per subtile, so once one subtile is sent this never blocks: the
//     loop becomes a busy poll of drain passes (faithful to the published kernel).
#include <vector>

#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

class AgDrain {
public:
    // `ub`: the AG buffer (sub_m x base_n fp16, at 64 KiB).
    AgDrain(BlockCtx& blk, const SubtileArArgs& a, Tile& ub);

    bool done() const { return completed_ == static_cast<int>(assigned_.size()); }
    // One drain pass: `did` is set when at least one subtile was sent.
    Task drain_ready(bool& did);
    Task wait_summary();

private:
    Task transfer_to_all(int l);

    BlockCtx& blk_;
    const SubtileArArgs& a_;
    Tile& ub_;
    std::vector<int> assigned_;  // owner-local ids
    std::vector<bool> sent_;
    int cursor_ = 0;  // index into assigned_
    int completed_ = 0;
    int acks_ = 0;  // summary_ack_count: one per subtile sent
};

}  // namespace tandem::kernels
