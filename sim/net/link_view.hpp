#pragma once
// One stream's view of one directed link while a kernel of the stream sends over it
// (sim/net/link_hub.hpp): the calendar the stream books its own transfers on, and, unless the
// stream is the link's first, what it has handed in to the hub, so that the hub's usage less it
// is the other streams'.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/net/bandwidth_calendar.hpp"
#include "sim/net/link_hub.hpp"
#include "sim/share/binned_usage.hpp"
#include "sim/share/handed_in_spans.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class LinkView {
public:
    // `source`: the stream's producer id.
    LinkView(const LinkHub& hub, std::string name, std::int64_t capacity_bytes_per_s, int source);

    BandwidthCalendar& calendar() { return calendar_; }
    const BandwidthCalendar& calendar() const { return calendar_; }

    // The other streams' usage of the link, read beside the calendar by a booking: empty until
    // another stream has sent over it.
    UsageSum others() const;
    // This stream booked a transfer at `rates` (book_transfer's rate changes) until `end`: its
    // bytes are noted where it moved them, not spread evenly (a transfer that waited for room
    // moved nothing meanwhile, and the others must see that). Returns true when it is the
    // window's first usage of the link (the caller lists the link to hand in).
    bool note_booked(std::span<const Breakpoint> rates, SimTime end);
    // Appends the usage booked since the last call to `out`, as link `link_id`'s, to hand in; it
    // counts as handed in from now on. `out` is the message's traffic (the hub keeps spans of it,
    // and so does this view until it knows whether it is the hub's first).
    void take_usage(int link_id, const std::shared_ptr<LinkTraffic>& out);
    // How many records take_usage() would append now.
    std::size_t usage_to_hand_in() const { return window_.size(); }
    // No booking from now on starts before `horizon`.
    void forget_before(SimTime horizon);

private:
    // Adds what was handed in since the last read to handed_in_, or drops it if the hub has made
    // this stream its first (whose usage others() never subtracts).
    void settle_handed_in() const;

    const LinkHub& hub_;
    int source_;
    BandwidthCalendar calendar_;
    // This stream's usage in the hub's rest_usage(), and what it handed in since others() last
    // read (kept as spans of the traffic it handed in, sim/share/handed_in_spans.hpp, not bins,
    // until then: a stream the barrier makes the hub's first, on a full mesh most often the only
    // one, keeps no bins of its own usage). Mutable: settled on the view's own stream by others().
    mutable BinnedUsage handed_in_{kLinkUsageBinPs};
    mutable HandedInSpans<LinkTraffic> unsettled_{kLinkUsageBinPs};
    std::vector<LinkUsage> window_;  // this window's usage, to hand in
};

}  // namespace tandem
