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
//
// With a wider accumulator (UbStage(blk, rows, cols, fp16, fp32): Iris's fused ops sum fp16
// partials in fp32, rounding once), an item's first tile is converted (TCVT) into the fp32
// accumulator when a second is added, each added tile is converted and added there, and the sum
// is converted back into the input tile before it is stored (an item that is only loaded and
// stored is stored as loaded). A stage then holds two fp32 tiles and one of the data per set, so
// its comm grid is cut for fp32 (make_comm_grid with the accumulator's dtype).
#include "sim/isa/isa.hpp"

namespace tandem::kernels::collectives {

// The dtype Iris's fused ops sum a tile's partials in: fp32 for fp16 and bf16 data (Iris's
// kernels load the partials and accumulate in fp32, rounding once), the data's own otherwise.
// (HCCL's collectives sum in the data's dtype: they keep UbStage's plain form.)
inline DType fused_sum_dtype(DType data) { return data == DType::F16 || data == DType::BF16 ? DType::F32 : data; }

class UbStage {
public:
    UbStage(BlockCtx& blk, int tile_rows, int tile_cols, DType dtype);
    UbStage(BlockCtx& blk, int tile_rows, int tile_cols, DType dtype, DType acc_dtype);

    Task load(GmTensor src);
    Task add(GmTensor src);
    Task store(GmTensor dst, AtomicType atomic = AtomicType::None);
    void finish_item();
    // Every pre-set flag consumed: call once, after the last item.
    void drain();

    // The current item's accumulator (for vector work beyond a sum, e.g. a bias row).
    Tile& acc() { return *acc_[set_]; }

private:
    bool wide() const { return wide_[0] != nullptr; }

    BlockCtx& blk_;
    Tile* acc_[2];
    Tile* in_[2];
    Tile* wide_[2] = {nullptr, nullptr};        // a loaded tile converted to the accumulator's dtype
    bool first_in_in_ = false;                  // wide: the item's only tile so far is in in_ (as loaded)
    bool sum_in_in_ = false;                    // wide: the item's sum already converted into in_
    int set_ = 0;
    bool in_read_pending_[2] = {false, false};  // a TADD read in_[s]: V -> MTE2 flag set
    bool acc_from_vector_ = false;              // acc's last writer is a TADD (else the TLOAD)
    bool ordered_for_store_ = false;            // this item's store already waited for acc
};

}  // namespace tandem::kernels::collectives
