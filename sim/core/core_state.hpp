#pragma once
// The state of one AI core that outlives a block: when each pipe is next free, how long each
// pipe has been busy, and (functional mode) the bytes of its local memories.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/pipe.hpp"
#include "sim/mem/zeroed_buffer.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct CoreState {
    CoreType type = CoreType::AIC;
    int index = 0;
    std::array<SimTime, kPipeCount> free_at{};
    std::array<SimTime, kPipeCount> busy_ps{};
    std::array<std::int64_t, kPipeCount> instructions{};
    // Sized on first use (functional); zero pages until touched, so a memory whose tiles only
    // refer to GM (deferred loads) costs no host memory.
    std::array<ZeroedBuffer, kMemKindCount> memory;
};

}  // namespace tandem
