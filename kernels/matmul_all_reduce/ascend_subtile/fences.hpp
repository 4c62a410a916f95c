#pragma once
// The fence the newer example puts around its signals: pipe_barrier(PIPE_ALL) then
// dsb(DSB_DDR), once before each subtile's two TNOTIFYs (release) and once at the first ready
// subtile of an all-gather drain pass (acquire).
//
// Tandem has no DSB instruction, and needs none: a store's pipe time already ends when its
// bytes are at the target (a remote one includes the link latency), so pipe_barrier(PIPE_ALL)
// already waits until this core's writes are in memory, which is what DSB_DDR waits for. The
// DSB is modelled as a second pipe_barrier(PIPE_ALL): it finds the pipes drained and costs its
// fixed overhead only (the profile's pipe_barrier_cycles, an assumed 4 cycles). The fences the
// atomic of a TNOTIFY itself needs are in the profile's atomic latencies.
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

inline void pipe_all_then_dsb(BlockCtx& blk) {
    pipe_barrier(blk, PIPE_ALL);
    pipe_barrier(blk, PIPE_ALL);  // dsb(DSB_DDR): nothing left in flight, its fixed cost only
}

}  // namespace tandem::kernels
