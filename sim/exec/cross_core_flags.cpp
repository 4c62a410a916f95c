#include "sim/exec/cross_core_flags.hpp"

#include <algorithm>

namespace tandem {

void CrossCoreFlags::clear() {
    groups_.clear();
    counters_.clear();
}

SimTime CrossCoreFlags::Group::count_time(std::size_t k) const {
    SimTime t = 0;
    for (const auto& s : sets) {
        if (s.size() <= k) return kNever;
        t = std::max(t, s[k]);
    }
    return t;
}

std::size_t CrossCoreFlags::Group::counts() const {
    std::size_t n = sets.empty() ? 0 : sets.front().size();
    for (const auto& s : sets) n = std::min(n, s.size());
    return n;
}

int CrossCoreFlags::conflicting_target(std::uint64_t group_key, int flag, const std::vector<int>& targets) const {
    auto g = groups_.find(group_key);
    const Group* mine = g == groups_.end() ? nullptr : g->second.get();
    for (int t : targets) {
        auto c = counters_.find(counter_key(t, flag));
        if (c != counters_.end() && c->second.group != nullptr && c->second.group != mine) return t;
    }
    return -1;
}

void CrossCoreFlags::set(std::uint64_t group_key, int flag, const std::vector<int>& sources,
                         const std::vector<int>& targets, int from, SimTime visible) {
    auto& slot = groups_[group_key];
    if (!slot) {
        slot = std::make_unique<Group>();
        slot->sources = sources;
        slot->sets.resize(sources.size());
        for (int t : targets) counters_[counter_key(t, flag)].group = slot.get();
    }
    Group& g = *slot;
    const auto it = std::find(g.sources.begin(), g.sources.end(), from);
    auto& list = g.sets[static_cast<std::size_t>(it - g.sources.begin())];
    list.insert(std::upper_bound(list.begin(), list.end(), visible), visible);
}

SimTime CrossCoreFlags::next_count(int target, int flag) const {
    auto c = counters_.find(counter_key(target, flag));
    if (c == counters_.end() || c->second.group == nullptr) return kNever;
    return c->second.group->count_time(c->second.taken);
}

int CrossCoreFlags::take(int target, int flag, SimTime t) {
    Counter& c = counters_.at(counter_key(target, flag));
    // Counts arrived by t and not taken: the counter's value just before this take.
    int pending = 0;
    while (c.group->count_time(c.taken + static_cast<std::size_t>(pending)) <= t && pending <= kMaxPending) ++pending;
    ++c.taken;
    return pending;
}

int CrossCoreFlags::untaken(int target, int flag) const {
    auto c = counters_.find(counter_key(target, flag));
    if (c == counters_.end() || c->second.group == nullptr) return 0;
    return static_cast<int>(c->second.group->counts() - c->second.taken);
}

std::vector<int> CrossCoreFlags::missing_sources(int target, int flag) const {
    auto c = counters_.find(counter_key(target, flag));
    if (c == counters_.end() || c->second.group == nullptr) return {};
    std::vector<int> out;
    const Group& g = *c->second.group;
    for (std::size_t i = 0; i < g.sources.size(); ++i)
        if (g.sets[i].size() <= c->second.taken) out.push_back(g.sources[i]);
    return out;
}

}  // namespace tandem
