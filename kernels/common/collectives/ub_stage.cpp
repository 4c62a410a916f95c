#include "kernels/common/collectives/ub_stage.hpp"

namespace tandem::kernels::collectives {

namespace {
// Event ids per set: MTE3 -> MTE2 (acc free), MTE2 -> V (input loaded), V -> MTE2 (input read),
// V or MTE2 -> MTE3 (acc complete). Ids 0 and 1 (one per set) on each pipe pair.
constexpr int kSetEvent[2] = {0, 1};
}  // namespace

UbStage::UbStage(BlockCtx& blk, int tile_rows, int tile_cols, DType dtype)
    : UbStage(blk, tile_rows, tile_cols, dtype, dtype) {}

UbStage::UbStage(BlockCtx& blk, int tile_rows, int tile_cols, DType dtype, DType acc_dtype) : blk_(blk) {
    const bool wide = acc_dtype != dtype;
    acc_[0] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, acc_dtype, wide ? "commAccWidePing" : "commAccPing");
    acc_[1] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, acc_dtype, wide ? "commAccWidePong" : "commAccPong");
    in_[0] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, dtype, "commInPing");
    in_[1] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, dtype, "commInPong");
    if (wide) {
        wide_[0] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, acc_dtype, "commInWidePing");
        wide_[1] = &blk.alloc_tile(MemKind::UB, tile_rows, tile_cols, acc_dtype, "commInWidePong");
    }
    // Both sets start free: their "stores done" flags are pre-set.
    for (int s = 0; s < 2; ++s) set_flag(blk_, PIPE_MTE3, PIPE_MTE2, kSetEvent[s]);
}

Task UbStage::load(GmTensor src) {
    const int s = set_;
    wait_flag(blk_, PIPE_MTE3, PIPE_MTE2, kSetEvent[s]);  // this set's previous stores have read acc (and in)
    acc_from_vector_ = false;
    ordered_for_store_ = false;
    if (!wide()) {
        co_await TLOAD(*acc_[s], src);
        co_return;
    }
    // Wide: the first tile stays in in_ (stored from there if nothing is added to it).
    if (in_read_pending_[s]) wait_flag(blk_, PIPE_V, PIPE_MTE2, kSetEvent[s]);  // the last TCVT has read in
    in_read_pending_[s] = false;
    co_await TLOAD(*in_[s], src);
    first_in_in_ = true;
    sum_in_in_ = false;
}

Task UbStage::add(GmTensor src) {
    const int s = set_;
    if (wide() && first_in_in_) {
        // The first tile into the wide accumulator before in_ takes the next one.
        set_flag(blk_, PIPE_MTE2, PIPE_V, kSetEvent[s]);
        wait_flag(blk_, PIPE_MTE2, PIPE_V, kSetEvent[s]);
        TCVT(*acc_[s], *in_[s]);
        set_flag(blk_, PIPE_V, PIPE_MTE2, kSetEvent[s]);
        in_read_pending_[s] = true;
        first_in_in_ = false;
    }
    if (in_read_pending_[s]) wait_flag(blk_, PIPE_V, PIPE_MTE2, kSetEvent[s]);  // the last TADD has read in
    co_await TLOAD(*in_[s], src);
    set_flag(blk_, PIPE_MTE2, PIPE_V, kSetEvent[s]);  // acc and in loaded
    wait_flag(blk_, PIPE_MTE2, PIPE_V, kSetEvent[s]);
    if (wide()) {
        TCVT(*wide_[s], *in_[s]);
        TADD(*acc_[s], *acc_[s], *wide_[s]);
    } else {
        TADD(*acc_[s], *acc_[s], *in_[s]);
    }
    set_flag(blk_, PIPE_V, PIPE_MTE2, kSetEvent[s]);
    in_read_pending_[s] = true;
    acc_from_vector_ = true;
}

Task UbStage::store(GmTensor dst, AtomicType atomic) {
    const int s = set_;
    if (wide() && !first_in_in_ && !sum_in_in_) {
        // The sum rounded once into the data's dtype, in in_: its last reader is the vector pipe
        // (in order), and its next load waits for this set's stores (MTE3 -> MTE2).
        TCVT(*in_[s], *acc_[s]);
        sum_in_in_ = true;
    }
    if (!ordered_for_store_) {
        const Pipe writer = acc_from_vector_ ? PIPE_V : PIPE_MTE2;
        set_flag(blk_, writer, PIPE_MTE3, kSetEvent[s]);
        wait_flag(blk_, writer, PIPE_MTE3, kSetEvent[s]);
        ordered_for_store_ = true;
    }
    co_await TSTORE(dst, wide() ? *in_[s] : *acc_[s], atomic);
}

void UbStage::finish_item() {
    set_flag(blk_, PIPE_MTE3, PIPE_MTE2, kSetEvent[set_]);
    set_ = 1 - set_;
}

void UbStage::drain() {
    for (int s = 0; s < 2; ++s) {
        wait_flag(blk_, PIPE_MTE3, PIPE_MTE2, kSetEvent[s]);
        if (in_read_pending_[s]) wait_flag(blk_, PIPE_V, PIPE_MTE2, kSetEvent[s]);
        in_read_pending_[s] = false;
    }
}

}  // namespace tandem::kernels::collectives
