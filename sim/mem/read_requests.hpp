#pragma once
// What bounds one core's reads of its own chip's GM beyond its path's rate: the requests it keeps
// in flight (sim/MODEL.md "The memory system", "One core's local reads"). Each request returns its
// data an L2 hit's latency after it leaves, or that plus a miss's when its line is not resident,
// so a core with `bytes_in_flight` of requests out reads at most bytes_in_flight / (the mean
// latency of its requests) (Little's law): a read from HBM runs slower per core than one from
// the L2 however much HBM has left, and a read wholly in the L2 is bound by the path's rate.
#include <cstdint>

#include "sim/sim_time.hpp"

namespace tandem {

struct ReadRequests {
    std::int64_t bytes_in_flight = 0;  // 0: no bound (the path's rate alone)
    SimTime hit_ps = 0;                // an L2 hit's latency
    SimTime miss_ps = 0;               // what a miss adds to it (HBM behind the L2)

    bool bounded() const { return bytes_in_flight > 0; }
    // The most a read of which `miss_share` (0..1) of the bytes miss the L2 moves per second.
    std::int64_t rate_bps(double miss_share) const;
};

}  // namespace tandem
