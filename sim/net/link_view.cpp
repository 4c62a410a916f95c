#include "sim/net/link_view.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace tandem {

LinkView::LinkView(const LinkHub& hub, std::string name, std::int64_t capacity_bytes_per_s, int source)
    : hub_(hub), source_(source), calendar_(std::move(name), capacity_bytes_per_s) {}

void LinkView::settle_handed_in() const {
    if (unsettled_.empty() || hub_.first_source() < 0) return;
    // Added as take_usage() would have added them: only bins before this view's horizon (never
    // read again) can differ.
    if (hub_.first_source() != source_) {
        for (const LinkUsage& u : unsettled_) handed_in_.add(u.start, u.end, u.bytes);
    }
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

void LinkView::take_usage(int link_id, std::vector<std::pair<int, LinkUsage>>& out) {
    for (const LinkUsage& u : window_) out.emplace_back(link_id, u);
    // Which stream is the hub's first is settled at the barrier that delivers its first usage:
    // until then what this view hands in waits as records; once it knows it is not the first,
    // it keeps what it hands in, added as the hub adds it (LinkHub::deliver).
    if (hub_.first_source() < 0) {
        unsettled_.insert(unsettled_.end(), window_.begin(), window_.end());
    } else if (hub_.first_source() == source_) {
        unsettled_.clear();
        handed_in_.clear();
    } else {
        settle_handed_in();
        for (const LinkUsage& u : window_) handed_in_.add(u.start, u.end, u.bytes);
    }
    window_.clear();
}

void LinkView::forget_before(SimTime horizon) {
    calendar_.forget_before(horizon);
    handed_in_.forget_before(horizon);
    // A waiting record whose bins all end by the horizon's would add only forgotten bins.
    const std::int64_t horizon_bin = horizon / kLinkUsageBinPs;
    std::erase_if(unsettled_, [&](const LinkUsage& u) { return u.end <= u.start || (u.end - 1) / kLinkUsageBinPs < horizon_bin; });
}

}  // namespace tandem
