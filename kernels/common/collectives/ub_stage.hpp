#pragma once
// The vector core's working unit for every collective and reduction: one comm tile at a time
// through UB, loaded (from local GM or a peer's window), optionally summed with more tiles
// (TADD in the data's dtype, as HCCL reduces), then stored to one or more places (local GM, a
// peer's window, plain or AtomicAdd). Two sets of UB tiles (ping and pong) alternate between
// items, so one item's loads run while the previous item's stores are still on MTE3; within an
// item the pipes are ordered by set_flag/wait_flag only (the scalar does not wait).
//
//   UbStage ub(blk, grid.tile_rows, grid.tile_cols, dtype);
//   co_await ub.load(first);          // a new item: acc = first
//   co_await ub.add(other);           // acc += other (any number of times)
//   co_await ub.store(dst);           // any number of times
//   ub.finish_item();                 // the other set takes the next item
//   ...
//   ub.drain();                       // before the block ends (or before a pipe_barrier + flag)
#include "sim/isa/isa.hpp"

namespace tandem::kernels::collectives {

class UbStage {
public:
    UbStage(BlockCtx& blk, int tile_rows, int tile_cols, DType dtype);

    Task load(GmTensor src);
    Task add(GmTensor src);
    Task store(GmTensor dst, AtomicType atomic = AtomicType::None);
    void finish_item();
    // Every pre-set flag consumed: call once, after the last item.
    void drain();

    // The current item's accumulator (for vector work beyond a sum, e.g. a bias row).
    Tile& acc() { return *acc_[set_]; }

private:
    BlockCtx& blk_;
    Tile* acc_[2];
    Tile* in_[2];
    int set_ = 0;
    bool in_read_pending_[2] = {false, false};  // a TADD read in_[s]: V -> MTE2 flag set
    bool acc_from_vector_ = false;              // acc's last writer is a TADD (else the TLOAD)
    bool ordered_for_store_ = false;            // this item's store already waited for acc
};

}  // namespace tandem::kernels::collectives
