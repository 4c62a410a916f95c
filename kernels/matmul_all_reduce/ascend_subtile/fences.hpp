#pragma once
// The fence the newer example puts around its signals: pipe_barrier(PIPE_ALL) then
// dsb(DSB_DDR), once before each subtile's two TNOTIFYs (release) and once at the first ready
// subtile of an all-gather drain pass (acquire).
//
// pipe_barrier(PIPE_ALL) waits until this core's stores have landed (a remote one a route's
// latency after its last byte leaves); dsb then waits for the remote ones' acknowledgements,
// which take the route back (sim/isa/isa.hpp). So a release after a remote atomic add costs the
// add's round trip, and an acquire long after the block's last remote store only the fixed cost.
// The fences the atomic of a TNOTIFY itself needs are in the profile's atomic latencies.
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

inline void pipe_all_then_dsb(BlockCtx& blk) {
    pipe_barrier(blk, PIPE_ALL);
    dsb(blk);
}

}  // namespace tandem::kernels
