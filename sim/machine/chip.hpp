#pragma once
// One chip (rank): its global memory, its memory system as its streams share it (L2, HBM) and its
// signal words. Its AI cores are per stream
// (sim/core/stream_cores.hpp): kernels on two streams never share a core's state.
#include <vector>

#include "sim/exec/signal_store.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/mem/cluster_port.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/profile.hpp"

namespace tandem {

struct Chip {
    Chip(int rank, const Profile& profile, bool functional);

    int rank;
    GlobalMemory gm;
    ChipMemory memory;
    SignalStore signals;
    // Every stream's AIVs' holds of the clusters' ports, as delivered at the barriers (written
    // there only, read by the streams in their windows).
    ClusterPortHolds ports;
};

}  // namespace tandem
