#include "sim/exec/logical_process.hpp"

#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/core/cost_model.hpp"
#include "sim/net/topology.hpp"

// What a stream books on links and hands in at its barrier: the links' usage, its memory
// traffic, its messages (sim/exec/logical_process.hpp).
namespace tandem {

namespace {

// What a stream booked in its window, for `rank`'s other streams: usable from the barrier on.
Message usage_message(Message::Kind kind, SimTime window_end, int rank) {
    Message m;
    m.kind = kind;
    m.visible_at = window_end;
    m.dst_rank = rank;
    return m;
}

}  // namespace

LinkView& LogicalProcess::link(int link_id) {
    auto& slot = links_[link_id];
    if (!slot) slot = std::make_unique<LinkView>(machine_.link_hub(link_id), topology_.describe_link(link_id), topology_.link_bytes_per_s(link_id), source_id());
    // Forgotten when booked rather than at every window: a mesh comm stream has a calendar per
    // peer, and visiting them all each window would cost O(ranks) per window. A logged run keeps
    // the links' history for the trace's counters.
    if (!record_log_) slot->forget_before(horizon_);
    return *slot;
}

SimTime LogicalProcess::book_route(std::span<const int> route, SimTime start, double bytes, std::int64_t cap_bytes_per_s) {
    RouteScratch& s = route_scratch_;
    s.views.clear();
    s.path.clear();
    s.others.clear();
    s.background.clear();
    s.others.reserve(route.size());  // background points into it
    for (int id : route) {
        LinkView& view = link(id);
        s.views.push_back(&view);
        s.path.push_back(&view.calendar());
        s.others.push_back(view.others());
        s.background.push_back(&s.others.back());
    }
    const SimTime end = book_transfer(s.path, start, bytes, cap_bytes_per_s, s.background, &s.rates);
    for (std::size_t i = 0; i < route.size(); ++i) {
        if (s.views[i]->note_booked(s.rates, end)) links_used_.push_back(route[i]);
    }
    return end;
}

void LogicalProcess::send_memory_traffic() {
    memory_.take_traffic(traffic_out_);
    for (MemoryView::ChipTraffic& t : traffic_out_) {
        if (t.traffic->usage.empty() && t.traffic->touched_regions.empty()) continue;
        if (record_log_) {
            UsageBins& kept = memory_log_[t.rank];
            for (const MemUsage& u : t.traffic->usage) kept.add(u);
        }
        Message m = usage_message(Message::Kind::MemTraffic, window_end_, t.rank);
        m.set_usage(std::move(t.traffic));
        send(std::move(m));
    }
    traffic_out_.clear();
}

void LogicalProcess::send_link_traffic() {
    if (links_used_.empty()) return;
    auto traffic = std::make_shared<LinkTraffic>();
    std::size_t records = 0;
    for (int id : links_used_) records += links_.at(id)->usage_to_hand_in();
    traffic->usage.reserve(records);  // a kernel's first window hands in most of its bookings
    traffic->links.reserve(links_used_.size());
    for (int id : links_used_) links_.at(id)->take_usage(id, traffic);
    links_used_.clear();
    Message m = usage_message(Message::Kind::LinkTraffic, window_end_, rank_);
    m.set_usage(std::move(traffic));
    send(std::move(m));
}

void LogicalProcess::note_port_hold(const PortHold& h) {
    port_holds_.add(source_id(), h);
    port_out_.push_back(h);
}

double LogicalProcess::port_held_bytes(int cluster, SimTime from, SimTime to) const {
    // This stream's records of earlier windows are among the chip's (send_port_traffic).
    const ClusterPortHolds* delivered = chip(rank_).ports;
    const double earlier = delivered == nullptr ? 0 : delivered->mean_held_bytes(cluster, from, to);
    return port_holds_.mean_held_bytes(cluster, from, to) + earlier;
}

void LogicalProcess::send_port_traffic() {
    if (port_out_.empty()) return;
    auto traffic = std::make_shared<PortTraffic>();
    traffic->holds = std::move(port_out_);
    port_out_.clear();
    // The chip has them from the barrier on, before this stream runs again: kept once, there
    // (and forgotten there a sample behind the horizon).
    port_holds_.clear();
    Message m = usage_message(Message::Kind::PortTraffic, window_end_, rank_);
    m.set_usage(std::move(traffic));
    send(std::move(m));
}

void LogicalProcess::hand_in_memory_log() {
    for (const auto& [rank, bins] : memory_log_) {
        if (bins.l2.empty() && bins.hbm.empty()) continue;
        std::vector<MemBinBytes> out;
        // An empty store's bin numbers mean nothing: the range is that of the stores with bins.
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        std::int64_t end = std::numeric_limits<std::int64_t>::min();
        for (const BinnedUsage* u : {&bins.l2, &bins.hbm}) {
            if (u->empty()) continue;
            first = std::min(first, u->first_bin());
            end = std::max(end, u->end_bin());
        }
        for (std::int64_t b = first; b < end; ++b) {
            const auto l2 = std::llround(bins.l2.bytes_in(b));
            const auto hbm = std::llround(bins.hbm.bytes_in(b));
            if (l2 != 0 || hbm != 0) out.push_back(MemBinBytes{b, l2, hbm});
        }
        if (!out.empty()) machine_.append_memory_usage(rank, std::move(out));
    }
    memory_log_.clear();
}

void LogicalProcess::send(Message m) {
    m.source = source_id();
    m.seq = seq_++;
    if (m.visible_at < window_end_) {
        throw SimError(fmt::format("internal: message visible at {} ps inside the current window (ends {} ps); "
                                   "a latency in the profile is below the coordinator's lookahead",
                                   m.visible_at, window_end_));
    }
    outbox_.push_back(std::move(m));
}

}  // namespace tandem
