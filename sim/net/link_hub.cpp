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
    for (const LinkUsage* u = begin; u != end; ++u) {
        if (u->end > u->start && u->bytes > 0) usage_end_ = std::max(usage_end_, u->end);
    }
    if (source == first_source_ && first_to_bin_.pending()) {
        first_records_.push(traffic, records.begin, records.end);
        // Pruned when they have doubled, so that a long run keeps only what lies ahead.
        if (first_records_.record_count() >= 2 * records_after_prune_ + 64) prune_first_records(horizon_);
        return;
    }
    BinnedUsage& into = source == first_source_ ? first_ : rest_;
    into.forget_before(horizon);
    for (const LinkUsage* u = begin; u != end; ++u) into.add(u->start, u->end, u->bytes);
}

void LinkHub::forget_before(SimTime horizon) {
    horizon_ = std::max(horizon_, horizon);
    if (first_to_bin_.pending()) {
        prune_first_records(horizon_);
    } else {
        first_.forget_before(horizon);
    }
    rest_.forget_before(horizon);
}

void LinkHub::restart_with(int source) {
    // Every bin that any stream reads from now on is empty in both stores, and in every view's
    // copy of what it handed in (sim/net/link_view.hpp): dropping them changes no sum read.
    first_source_ = source;
    first_records_.clear_and_free();
    records_after_prune_ = 0;
    first_.clear();
    rest_.clear();
    first_to_bin_.mark_pending();
    usage_end_ = 0;
}

void LinkHub::prune_first_records(SimTime horizon) {
    // A span whose records' last bins all end by the horizon's bin adds only to forgotten bins
    // (the message it points into is freed once no hub holds a span of it).
    first_records_.drop_before(horizon);
    records_after_prune_ = first_records_.record_count();
}

void LinkHub::bin_first_usage() const {
    // Every bin from the horizon on gets the records' bytes in the order delivered, as deliver()
    // would have added them; bins before it (forgotten) get nothing, so records of a stream that
    // has finished make no pages. The horizon is the latest barrier's: no booking starts before
    // it, and the hub's own may be many barriers old (the comm kernel of an op's previous view
    // made 20 MB of pages of history at 64 ranks, heaptrack).
    const SimTime horizon =
        barrier_horizon_ == nullptr ? horizon_ : std::max(horizon_, barrier_horizon_->load(std::memory_order_acquire));
    first_.forget_before(horizon);
    first_records_.add_to(first_);
    first_records_.clear_and_free();
}

}  // namespace tandem
