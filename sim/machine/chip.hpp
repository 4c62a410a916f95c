#pragma once
// One chip (rank): its global memory and its signal words. Its AI cores are per stream
// (sim/core/stream_cores.hpp): kernels on two streams never share a core's state.
#include <vector>

#include "sim/exec/signal_store.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/profile.hpp"

namespace tandem {

struct Chip {
    Chip(int rank, const Profile& profile, bool functional);

    int rank;
    GlobalMemory gm;
    SignalStore signals;
};

}  // namespace tandem
