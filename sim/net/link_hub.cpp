#include "sim/net/link_hub.hpp"

#include <algorithm>

namespace tandem {

void LinkHub::deliver(const std::shared_ptr<const LinkTraffic>& traffic, const LinkTraffic::Records& records,
                      int source, SimTime horizon) {
    if (records.end <= records.begin) return;
    // As record by record: the first record settles which store the stream's usage goes to (once
    // a record makes the link busy, it stays busy for the rest; a restart makes `source` the
    // first for all of them).
    if (first_source_ < 0) first_source_ = source;
    if (source != first_source_ && idle_at(horizon)) restart_with(source);
    horizon_ = std::max(horizon_, horizon);
    const LinkUsage* const begin = traffic->usage.data() + records.begin;
    const LinkUsage* const end = traffic->usage.data() + records.end;
    std::int64_t last_bin = -1;
    for (const LinkUsage* u = begin; u != end; ++u) {
        if (u->end > u->start && u->bytes > 0) usage_end_ = std::max(usage_end_, u->end);
        if (u->end > u->start) last_bin = std::max(last_bin, (u->end - 1) / kLinkUsageBinPs);
    }
    if (source == first_source_ && !first_binned_.load(std::memory_order_relaxed)) {
        first_records_.push_back(RecordSpan{traffic, records.begin, records.end, last_bin});
        first_record_count_ += records.end - records.begin;
        // Pruned when they have doubled, so that a long run keeps only what lies ahead.
        if (first_record_count_ >= 2 * records_after_prune_ + 64) prune_first_records(horizon_);
        return;
    }
    BinnedUsage& into = source == first_source_ ? first_ : rest_;
    into.forget_before(horizon);
    for (const LinkUsage* u = begin; u != end; ++u) into.add(u->start, u->end, u->bytes);
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
    first_record_count_ = 0;
    records_after_prune_ = 0;
    first_.clear();
    rest_.clear();
    first_binned_.store(false, std::memory_order_relaxed);
    usage_end_ = 0;
}

void LinkHub::prune_first_records(SimTime horizon) {
    // A span whose records' last bins all end by the horizon's bin adds only to forgotten bins
    // (the message it points into is freed once no hub holds a span of it).
    const std::int64_t horizon_bin = horizon / kLinkUsageBinPs;
    std::erase_if(first_records_, [&](const RecordSpan& s) {
        if (s.last_bin >= horizon_bin) return false;
        first_record_count_ -= s.end - s.begin;
        return true;
    });
    records_after_prune_ = first_record_count_;
}

void LinkHub::bin_first_usage() const {
    std::lock_guard lock(mu_);
    if (first_binned_.load(std::memory_order_relaxed)) return;
    // Every bin from the horizon on gets the records' bytes in the order delivered, as deliver()
    // would have added them; bins before it (forgotten) get nothing, so records of a stream that
    // has finished make no pages. The horizon is the latest barrier's: no booking starts before
    // it, and the hub's own may be many barriers old (the comm kernel of an op's previous view
    // made 20 MB of pages of history at 64 ranks, heaptrack).
    const SimTime horizon =
        barrier_horizon_ == nullptr ? horizon_ : std::max(horizon_, barrier_horizon_->load(std::memory_order_acquire));
    first_.forget_before(horizon);
    for (const RecordSpan& s : first_records_) {
        const LinkUsage* const records = s.traffic->usage.data();
        for (std::uint32_t i = s.begin; i < s.end; ++i) first_.add(records[i].start, records[i].end, records[i].bytes);
    }
    first_records_.clear();
    first_records_.shrink_to_fit();
    first_record_count_ = 0;
    first_binned_.store(true, std::memory_order_release);
}

}  // namespace tandem
