#pragma once
// One chip (rank): its global memory, its signal words, and its AIC and AIV cores.
#include <vector>

#include "sim/core/core_state.hpp"
#include "sim/exec/signal_store.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/profile.hpp"

namespace tandem {

struct Chip {
    Chip(int rank, const Profile& profile, bool functional);

    int rank;
    GlobalMemory gm;
    SignalStore signals;
    std::vector<CoreState> aic;
    std::vector<CoreState> aiv;

    std::vector<CoreState>& cores(CoreType t) { return t == CoreType::AIC ? aic : aiv; }
};

}  // namespace tandem
