#include "sim/net/link_hub.hpp"

#include <algorithm>

namespace tandem {

void LinkHub::deliver(const LinkUsage& usage, int source, SimTime horizon) {
    if (first_source_ < 0) first_source_ = source;
    if (source != first_source_ && idle_at(horizon)) restart_with(source);
    horizon_ = std::max(horizon_, horizon);
    if (usage.end > usage.start && usage.bytes > 0) usage_end_ = std::max(usage_end_, usage.end);
    if (source == first_source_ && !first_binned_.load(std::memory_order_relaxed)) {
        first_records_.push_back(usage);
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

void LinkHub::restart_with(int source) {
    // Every bin that any stream reads from now on is empty in both stores, and in every view's
    // copy of what it handed in (sim/net/link_view.hpp): dropping them changes no sum read.
    first_source_ = source;
    first_records_.clear();
    records_after_prune_ = 0;
    first_.clear();
    rest_.clear();
    first_binned_.store(false, std::memory_order_relaxed);
    usage_end_ = 0;
}

void LinkHub::prune_first_records(SimTime horizon) {
    // A record whose last bin ends by the horizon's bin adds only to forgotten bins.
    const std::int64_t horizon_bin = horizon / kLinkUsageBinPs;
    std::erase_if(first_records_, [&](const LinkUsage& u) {
        return u.end <= u.start || (u.end - 1) / kLinkUsageBinPs < horizon_bin;
    });
    records_after_prune_ = first_records_.size();
}

void LinkHub::bin_first_usage() const {
    std::lock_guard lock(mu_);
    if (first_binned_.load(std::memory_order_relaxed)) return;
    // Every bin from the horizon on gets the records' bytes in the order delivered, as deliver()
    // would have added them; bins before it (forgotten) get nothing, so records of a stream that
    // has finished make no pages.
    first_.forget_before(horizon_);
    for (const LinkUsage& u : first_records_) first_.add(u.start, u.end, u.bytes);
    first_records_.clear();
    first_records_.shrink_to_fit();
    first_binned_.store(true, std::memory_order_release);
}

}  // namespace tandem
