#pragma once
// A block part as the sanitizer's hooks know it (sim/sanitize/stream_sanitizer.hpp): its slot in
// its stream's running kernel (sim/core/block_slot.hpp) and its scalar clock at the instruction
// the hook is called for. Plain facts, so that the sanitizer needs nothing of sim/exec.
#include "sim/sim_time.hpp"

namespace tandem {

struct SanPart {
    int slot = 0;
    SimTime now = 0;
};

}  // namespace tandem
