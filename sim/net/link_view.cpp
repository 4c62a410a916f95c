#include "sim/net/link_view.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/burst_room.hpp"

namespace tandem {

namespace {
// Empties `records`, and frees their room if it was a burst's (sim/burst_room.hpp): a stream has
// a view per link it sends over (63 on a 64-rank mesh).
void clear_records(std::vector<LinkUsage>& records) {
    records.clear();
    release_burst_room(records);
}
}  // namespace

LinkView::LinkView(const LinkHub& hub, std::string name, std::int64_t capacity_bytes_per_s, int source)
    : hub_(hub), source_(source), calendar_(std::move(name), capacity_bytes_per_s) {}

void LinkView::settle_handed_in() const {
    const int first = hub_.first_source();
    if (first < 0) return;
    if (first == source_) {
        // The first's usage is in the hub's first store (or all before the horizon, from before
        // the hub made this stream its first): others() never subtracts it.
        unsettled_.clear();
        if (!handed_in_.empty()) handed_in_.clear();
        return;
    }
    // Added in the order handed in, as the hub added them to its rest (LinkHub::deliver): bins
    // before this view's horizon, never read again, are skipped.
    unsettled_.add_to(handed_in_);
    unsettled_.clear();
}

UsageSum LinkView::others() const {
    UsageSum sum(kLinkUsageRateStep);
    const int first = hub_.first_source();
    if (first < 0) return sum;
    settle_handed_in();
    if (first == source_) return sum.plus(&hub_.rest_usage());
    // The rest holds the same bytes this view handed in, added in the same order where no other
    // stream's are: there the difference is exactly zero.
    return sum.plus(&hub_.first_usage()).plus(&hub_.rest_usage()).minus(&handed_in_);
}

bool LinkView::note_booked(std::span<const Breakpoint> rates, SimTime end) {
    const bool first = window_.empty();
    for (std::size_t i = 0; i < rates.size(); ++i) {
        const SimTime from = rates[i].t;
        const SimTime to = i + 1 < rates.size() ? rates[i + 1].t : end;
        if (to > from && rates[i].rate > 0)
            window_.push_back(LinkUsage{from, to, static_cast<double>(rates[i].rate) * static_cast<double>(to - from) * 1e-12});
    }
    return first && !window_.empty();
}

void LinkView::take_usage(int link_id, const std::shared_ptr<LinkTraffic>& out) {
    const auto begin = static_cast<std::uint32_t>(out->usage.size());
    out->usage.insert(out->usage.end(), window_.begin(), window_.end());
    const auto end = static_cast<std::uint32_t>(out->usage.size());
    out->links.push_back(LinkTraffic::Records{link_id, begin, end});
    // Which stream is the hub's first is settled at the barriers (the first to hand usage in, or
    // the next after the link was idle: LinkHub::deliver). What this view hands in waits as
    // records until others() reads, and is then added to its copy only if it is not the first:
    // a stream that the barrier makes the first keeps no bins of its own usage.
    if (hub_.first_source() == source_) {
        unsettled_.clear();
        if (!handed_in_.empty()) handed_in_.clear();
    } else {
        unsettled_.push(out, begin, end);
    }
    clear_records(window_);
}

void LinkView::forget_before(SimTime horizon) {
    calendar_.forget_before(horizon);
    handed_in_.forget_before(horizon);
    // Waiting records whose bins all end by the horizon's would add only forgotten bins.
    unsettled_.drop_before(horizon);
}

}  // namespace tandem
