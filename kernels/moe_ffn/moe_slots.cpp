#include "kernels/moe_ffn/moe_slots.hpp"

#include <fmt/format.h>

namespace tandem::kernels::moe {

int SlotTable::add(const std::string& name, int count) {
    arrays_.push_back(Array{name, words_, count});
    words_ += count;
    return arrays_.back().first;
}

std::string SlotTable::name_of(int index) const {
    for (const Array& a : arrays_)
        if (index >= a.first && index < a.first + a.count) return a.count == 1 ? a.name : fmt::format("{}[{}]", a.name, index - a.first);
    return {};
}

MoeSlots::MoeSlots(int ranks, int experts) {
    const int E = experts;
    dispatched = table.add("dispatched", E);
    gmm1_done = table.add("gmm1_done", E);
    swiglu_done = table.add("swiglu_done", E);
    gmm2_done = table.add("gmm2_done", E);
    count_landed = table.add("count_row_landed", ranks);
    dispatch_arrival = table.add("dispatch_arrival", E);
    gmm1_ready = table.add("gmm1_ready", E);
    gmm1_arrival = table.add("gmm1_arrival", E);
    swiglu_ready = table.add("swiglu_ready", E);
    swiglu_arrival = table.add("swiglu_arrival", E);
    gmm2_ready = table.add("gmm2_ready", E);
    gmm2_arrival = table.add("gmm2_arrival", E);
    combine_ready = table.add("combine_ready", E);
    gmm1_finished = table.add("gmm1_done_aic0", 1);
    gmm2_join = table.add("gmm2_join", 1);
    unpermute_release = table.add("unpermute_release", 1);
    unpermute_phase1 = table.add("unpermute_phase1_start", 1);
    unpermute_phase1_done = table.add("unpermute_phase1_done", 1);
    combine_finished = table.add("combine_lanes_done", 1);
    unpermute_phase2 = table.add("unpermute_phase2_start", 1);
    progress = table.add("expert_progress", ranks);
    cross_rank_sync = table.add("cross_rank_sync", 1);
}

}  // namespace tandem::kernels::moe
