#include "sim/net/link_hub.hpp"

#include <algorithm>

namespace tandem {

void LinkHub::deliver(const LinkUsage& usage, int source, SimTime horizon) {
    if (first_source_ < 0) first_source_ = source;
    horizon_ = std::max(horizon_, horizon);
    if (source == first_source_ && !first_binned_.load(std::memory_order_relaxed)) {
        first_records_.push_back(Delivered{usage, horizon});
        // Pruned when they have doubled, so that a long run keeps only what lies ahead.
        if (first_records_.size() >= 2 * records_after_prune_ + 64) prune_first_records(horizon_);
        return;
    }
    BinnedUsage& into = source == first_source_ ? first_ : rest_;
    into.forget_before(horizon);
    into.add(usage.start, usage.end, usage.bytes);
}

void LinkHub::forget_before(SimTime horizon) {
    horizon_ = std::max(horizon_, horizon);
    if (first_binned_.load(std::memory_order_relaxed)) {
        first_.forget_before(horizon);
    } else {
        prune_first_records(horizon_);
    }
    rest_.forget_before(horizon);
}

void LinkHub::prune_first_records(SimTime horizon) {
    // A record whose last bin ends by the horizon's bin adds only to forgotten bins.
    const std::int64_t horizon_bin = horizon / kLinkUsageBinPs;
    std::erase_if(first_records_, [&](const Delivered& d) {
        return d.usage.end <= d.usage.start || (d.usage.end - 1) / kLinkUsageBinPs < horizon_bin;
    });
    records_after_prune_ = first_records_.size();
}

void LinkHub::bin_first_usage() const {
    std::lock_guard lock(mu_);
    if (first_binned_.load(std::memory_order_relaxed)) return;
    for (const Delivered& d : first_records_) {
        first_.forget_before(d.horizon);
        first_.add(d.usage.start, d.usage.end, d.usage.bytes);
    }
    first_.forget_before(horizon_);
    first_records_.clear();
    first_records_.shrink_to_fit();
    first_binned_.store(true, std::memory_order_release);
}

}  // namespace tandem
