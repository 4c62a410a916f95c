#include "sim/net/bandwidth_calendar.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <iterator>
#include <limits>
#include <vector>
#include <utility>

#include "sim/sim_error.hpp"

namespace tandem {

namespace {

// Amount of data in units of 1e-12 byte, so that rate (bytes/s) * duration (ps) is a whole
// number of units. 128 bits hold rate * kNever for any int64 rate, and 2^53 bytes.
__extension__ typedef __int128 Units;

constexpr double kMaxBytes = 9007199254740992.0;  // 2^53: beyond this doubles skip integers
constexpr std::int64_t kUnitsPerByte = 1000 * 1000 * 1000 * 1000LL;

Units to_units(double bytes) {
    // Split so the whole part converts exactly; only the sub-byte fraction is rounded.
    const double whole = std::floor(bytes);
    if (whole == bytes) return static_cast<Units>(static_cast<std::int64_t>(whole)) * kUnitsPerByte;  // the usual case
    const auto fraction = round_half_up_nonneg((bytes - whole) * static_cast<double>(kUnitsPerByte));
    return static_cast<Units>(static_cast<std::int64_t>(whole)) * kUnitsPerByte + fraction;
}

void check_request(SimTime start_ps, double bytes, std::int64_t rate_cap_bytes_per_s) {
    if (rate_cap_bytes_per_s <= 0) {
        throw SimError("book_transfer: rate cap must be positive, got " +
                       std::to_string(rate_cap_bytes_per_s) + " bytes/s");
    }
    if (!(bytes >= 0.0 && bytes <= kMaxBytes)) {  // also rejects NaN
        throw SimError("book_transfer: byte count must be in [0, 2^53], got " +
                       std::to_string(bytes));
    }
    if (start_ps < 0 || start_ps >= kNever) {  // keeps kNever - start from overflowing
        throw SimError("book_transfer: start time " + std::to_string(start_ps) +
                       " ps is outside the simulated time range [0, kNever)");
    }
}

}  // namespace

BandwidthCalendar::BandwidthCalendar(std::string name, std::int64_t capacity_bytes_per_s)
    : name_(std::move(name)), capacity_(capacity_bytes_per_s) {
    if (capacity_ <= 0) {
        throw SimError("bandwidth resource '" + name_ + "': capacity must be positive, got " +
                       std::to_string(capacity_) + " bytes/s");
    }
}

std::int64_t BandwidthCalendar::used_at(SimTime t) const {
    BreakpointList::Pos p;
    return points_.find_last_at_or_before(t, p) ? points_.at(p).rate : 0;
}

void BandwidthCalendar::forget_before(SimTime t) {
    horizon_ = std::max(horizon_, t);
    BreakpointList::Pos in_force;
    if (!points_.find_last_at_or_before(t, in_force)) return;
    // Keep the breakpoint in force at t (its time may be earlier; only its rate matters now),
    // unless its rate is 0, which the empty calendar says as well.
    points_.erase_before(in_force, points_.at(in_force).rate == 0);
}

void BandwidthCalendar::add(const Breakpoint* segments, std::size_t count, SimTime end, BreakpointList::Pos at,
                            bool found) {
    const SimTime t0 = segments[0].t;
    // The first breakpoint at or after t0, and the rate in force just before t0.
    BreakpointList::Pos p = points_.begin();
    std::int64_t before = 0;
    if (found) {
        p = at;
        if (points_.at(at).t == t0) {
            if (!points_.is_begin(at)) {
                BreakpointList::Pos q = at;
                points_.prev(q);
                before = points_.at(q).rate;
            }
        } else {
            before = points_.at(at).rate;
            points_.next(p);
        }
    }
    // Merge the old breakpoints in [t0, end] with the segments' starts and `end`, in time order,
    // keeping a breakpoint only where the new rate changes.
    scratch_.clear();
    std::int64_t old_rate = before;
    std::int64_t added = 0;
    std::int64_t last = before;
    std::size_t replaced = 0;
    std::size_t s = 0;
    bool end_done = false;
    BreakpointList::Pos q = p;
    for (;;) {
        const bool has_old = !points_.is_end(q) && points_.at(q).t <= end;
        if (!has_old && end_done) break;
        SimTime k = s < count ? segments[s].t : end;  // the segments all start before `end`
        if (has_old) k = std::min(k, points_.at(q).t);
        if (has_old && points_.at(q).t == k) {
            old_rate = points_.at(q).rate;
            points_.next(q);
            ++replaced;
        }
        if (s < count) {
            if (segments[s].t == k) added = segments[s++].rate;
        } else if (k == end) {
            added = 0;
            end_done = true;
        }
        const std::int64_t rate = old_rate + added;
        if (rate != last) {
            scratch_.push_back(Breakpoint{k, rate});
            last = rate;
        }
    }
    points_.replace(p, replaced, scratch_);
}

namespace detail {

// One calendar of a path during a booking: where the walk is in its breakpoints. No member has
// a default: a booking keeps eight on its stack and sets up only those of its path (start()).
struct BookingCursor {
    BandwidthCalendar* calendar;
    BreakpointList::Pos pos;  // the last breakpoint at or before the walk's instant...
    bool found;               // ...if there is one
    std::int64_t rate;        // booked rate in force at the walk's instant
    SimTime next;             // the next breakpoint's time
    std::int64_t background_max;  // the most the booking's background takes of this resource
    BreakpointList::Pos base_pos;  // pos and found where the unwritten segments start
    bool base_found;
    // The background's rate, read at an instant before `background_until`: it holds until then
    // (a UsageSum changes only at its bins' edges), so the many steps of one bin read it once.
    std::int64_t background_rate;
    SimTime background_until;

    void start(BandwidthCalendar* c, SimTime t) {
        calendar = c;
        background_max = 0;
        background_rate = 0;
        background_until = std::numeric_limits<SimTime>::min();
        seek(t);
    }

    void seek(SimTime t) {
        const BreakpointList& points = calendar->points_;
        found = points.find_last_at_or_before(t, pos);
        base_pos = pos;
        base_found = found;
        if (found) {
            rate = points.at(pos).rate;
            BreakpointList::Pos n = pos;
            points.next(n);
            next = points.is_end(n) ? kNever : points.at(n).t;
        } else {
            rate = 0;
            next = points.empty() ? kNever : points.at(points.begin()).t;
        }
    }

    // Moves to the breakpoint at `next`.
    void step() {
        const BreakpointList& points = calendar->points_;
        if (found) {
            points.next(pos);
        } else {
            pos = points.begin();
            found = true;
        }
        rate = points.at(pos).rate;
        BreakpointList::Pos n = pos;
        points.next(n);
        next = points.is_end(n) ? kNever : points.at(n).t;
    }

    // Zero, not negative: a background beside the calendar can oversubscribe it.
    std::int64_t spare() const { return std::max<std::int64_t>(0, calendar->capacity_ - rate); }

    void write(const Breakpoint* segments, std::size_t count, SimTime end) {
        calendar->add(segments, count, end, base_pos, base_found);
    }
};

}  // namespace detail

SimTime book_transfer(std::span<BandwidthCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s, std::span<const UsageSum* const> background,
                      std::vector<Breakpoint>* rates_out) {
    if (rates_out != nullptr) rates_out->clear();
    check_request(start_ps, bytes, rate_cap_bytes_per_s);
    if (!background.empty() && background.size() != path.size()) {
        throw SimError("book_transfer: " + std::to_string(background.size()) + " backgrounds for a path of " +
                       std::to_string(path.size()));
    }
    Units remaining = to_units(bytes);
    if (remaining == 0) return start_ps;
    for (std::size_t i = 0; i < path.size(); ++i) {
        const BandwidthCalendar& calendar = *path[i];
        if (std::find(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i), path[i]) !=
            path.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw SimError("book_transfer: resource '" + calendar.name_ + "' appears twice in one path");
        }
        if (start_ps < calendar.horizon_) {
            throw SimError("book_transfer: resource '" + calendar.name_ + "': start " + std::to_string(start_ps) +
                           " ps is before its forgotten history (horizon " + std::to_string(calendar.horizon_) +
                           " ps)");
        }
    }
    // Cursors on the stack for the usual short paths.
    constexpr std::size_t kInline = 8;
    std::array<detail::BookingCursor, kInline> inline_cursors;
    std::vector<detail::BookingCursor> heap_cursors;
    std::span<detail::BookingCursor> cursors;
    if (path.size() <= kInline) {
        cursors = std::span(inline_cursors.data(), path.size());
    } else {
        heap_cursors.resize(path.size());
        cursors = heap_cursors;
    }
    for (std::size_t i = 0; i < path.size(); ++i) cursors[i].start(path[i], start_ps);
    // The backgrounds (read only): background[i] beside path[i], or none, and the most each can
    // take: where a resource's own spare capacity less that still leaves the cap, the background
    // cannot bind and its bins are not walked.
    bool any_bg = false;
    for (std::size_t i = 0; i < background.size(); ++i) {
        cursors[i].background_max = background[i] != nullptr ? background[i]->max_rate() : 0;
        any_bg = any_bg || cursors[i].background_max > 0;
    }
    // Walk forwards one step at a time (a step ends at the next breakpoint of any calendar of the
    // path), collecting the transfer's rate changes; they are written into the calendars when the
    // bytes run out (or when the buffer is full: then the walk goes on from a fresh search).
    constexpr std::size_t kSegments = 16;
    std::array<Breakpoint, kSegments> segments;
    std::size_t count = 0;
    SimTime t = start_ps;
    for (;;) {
        std::int64_t rate = rate_cap_bytes_per_s;  // what this transfer gets from t on
        SimTime until = kNever;                    // the next breakpoint of any calendar
        if (!any_bg) {
            for (const detail::BookingCursor& c : cursors) {
                rate = std::min(rate, c.spare());
                until = std::min(until, c.next);
            }
        } else {
            for (std::size_t i = 0; i < cursors.size(); ++i) {
                const detail::BookingCursor& c = cursors[i];
                until = std::min(until, c.next);
                if (c.background_max == 0 || c.spare() - c.background_max >= rate_cap_bytes_per_s) {
                    rate = std::min(rate, c.spare());
                    continue;
                }
                const UsageSum* b = background[i];
                detail::BookingCursor& cb = cursors[i];
                if (t >= cb.background_until) {
                    cb.background_rate = b->rate_at(t);
                    cb.background_until = b->next_change(t);
                }
                const std::int64_t others = cb.background_rate;
                std::int64_t spare = std::max<std::int64_t>(0, c.spare() - others);
                // What is left beside others' usage is taken in whole steps of the usage's own
                // rounding, so that the calendar keeps its distinct rates few
                // (sim/net/breakpoint_list.hpp).
                if (others > 0 && spare < rate) spare -= spare % b->rate_step();
                rate = std::min(rate, spare);
                until = std::min(until, cb.background_until);
            }
        }
        if (count == 0 || rate != segments[count - 1].rate) {
            if (count == kSegments) {
                for (detail::BookingCursor& c : cursors) {
                    c.write(segments.data(), count, t);
                    c.seek(t);
                }
                count = 0;
            }
            segments[count++] = Breakpoint{t, rate};
            if (rates_out != nullptr) rates_out->push_back(Breakpoint{t, rate});
        }
        if (rate > 0) {
            const Units room = static_cast<Units>(rate) * (until - t);
            if (remaining <= room) {
                // Round up: the last byte is only moved at the end of its picosecond.
                const SimTime end = t + static_cast<SimTime>((remaining + rate - 1) / rate);
                for (detail::BookingCursor& c : cursors) {
                    c.write(segments.data(), count, end);
                    c.calendar->bytes_booked_ += bytes;
                }
                return end;
            }
            remaining -= room;
        }
        if (until >= kNever) {
            throw SimError("book_transfer: transfer starting at " + std::to_string(start_ps) +
                           " ps cannot finish within the simulated time range");
        }
        for (detail::BookingCursor& c : cursors) {
            if (c.next == until) c.step();
        }
        t = until;  // rate 0 simply waits here for the next breakpoint
    }
}

}  // namespace tandem
