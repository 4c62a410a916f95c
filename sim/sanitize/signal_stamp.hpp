#pragma once
// Under --sanitize, what a signal write carries: the writer's vector clock (what a TWAIT or TTEST
// that observes the write learns) and who wrote it, in which host call (a stale-flag report
// names the write, and compares its call with the waiting kernel's).
#include <cstdint>
#include <string>

#include "sim/sanitize/vector_clock.hpp"

namespace tandem {

struct SanSignalStamp {
    VectorClock clock;              // the writer's clock at the write (its release)
    ThreadKey thread = 0;           // the writing block part, or a rank's host
    std::uint32_t thread_clock = 0; // the writer's own entry in `clock`
    // The host call the writing kernel was launched in: the launching host's count of programs
    // started and barriers passed. Every host passes the same barriers, so calls line up across
    // ranks.
    std::uint64_t call = 0;
    bool by_host = false;  // a host signal write (a reset between calls): what the host meant, never stale
    std::string where;     // "call 1, launch 1 of rank 0's stream 'comm': rank 0, ..., TNOTIFY(set 1) on ..."
};

}  // namespace tandem
