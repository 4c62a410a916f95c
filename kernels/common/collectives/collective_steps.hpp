#pragma once
// The steps the baseline collectives are made of (device code on the vector cores), shared by
// reduce_scatter.cpp, all_gather.cpp and all_reduce.cpp. Block b works on tiles b, b + blocks, ...
// of every slice (the same on every rank), and its flags pair it with block b of its peers.
// Data is complete at the peer before its flag: every flag is set after a pipe_barrier(PIPE_ALL)
// (Ascend's dsb before the notify), so a receiver that sees the flag may read the data.
#include "kernels/common/collectives/collective.hpp"
#include "kernels/common/collectives/ub_stage.hpp"

namespace tandem::kernels::collectives::steps {

// Mesh reduce-scatter, first half: this rank's partial of every peer's slice q into q's inbox
// slot `me`, then one flag per peer.
Task mesh_push_partials(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub);
// Mesh reduce-scatter, second half: wait for every peer's partials, sum own slice (own partial
// first, then the peers' in rank order) into this rank's buffer; with `broadcast`, also store
// each reduced tile into every peer's buffer and flag it (the all-gather of an all-reduce).
Task mesh_reduce_own(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, bool broadcast);
// Mesh all-gather: this rank's slice into every peer's buffer, then one flag per peer.
Task mesh_broadcast_own(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub);
// Wait until every peer's slice has arrived (the flags mesh_broadcast_own / mesh_reduce_own set).
Task mesh_wait_gathered(BlockCtx& blk, const CollectiveArgs& a);

// Ring reduce-scatter: W-1 steps; at step s rank r sends its running sum of chunk (r-1-s) to the
// next rank's inbox slot s, which adds its own partial; after the last step rank r holds the sum
// of chunk r. With `send_reduced`, the reduced chunk also goes straight to the next rank's buffer
// (the all-gather's first step, flagged as gather step 0).
Task ring_reduce_scatter(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, bool send_reduced);
// Ring all-gather from step `first_step` (0, or 1 after ring_reduce_scatter(send_reduced)): at
// step s rank r forwards chunk (r-s) to the next rank; then waits for the last chunk to arrive.
Task ring_all_gather(BlockCtx& blk, const CollectiveArgs& a, UbStage& ub, int first_step);

}  // namespace tandem::kernels::collectives::steps
