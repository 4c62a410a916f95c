#pragma once
// The bandwidth calendar as it was before its breakpoints moved from a std::map into leaves
// (sim/net/breakpoint_list.hpp), kept verbatim as the reference the tests compare the current
// one against: same end times, same step functions, same errors, on random workloads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem::reference {


namespace detail {
class PathBooking;  // the booking walk of book_transfer(); see bandwidth_calendar.cpp
}

class ReferenceCalendar {
public:
    // Throws SimError if the capacity is not positive.
    ReferenceCalendar(std::string name, std::int64_t capacity_bytes_per_s);

    const std::string& name() const { return name_; }
    std::int64_t capacity() const { return capacity_; }

    // Rate booked at instant t, in bytes per second (0 <= used_at(t) <= capacity()).
    // Meaningless for t before the last forget_before() horizon.
    std::int64_t used_at(SimTime t) const;

    // Total bytes of all transfers booked on this resource, for utilisation reports.
    double bytes_booked() const { return bytes_booked_; }

    // Number of breakpoints of the usage step function currently stored (memory/cost gauge).
    std::size_t breakpoint_count() const { return used_.size(); }

    // The booked rate as a step function: (time, bytes per second from then on), in time order,
    // for the history not yet forgotten.
    std::vector<std::pair<SimTime, std::int64_t>> steps() const { return {used_.begin(), used_.end()}; }

    // Drops the usage history strictly before t. The caller promises that no later booking
    // starts before t; book_transfer() throws SimError if one does. Costs O(entries dropped).
    void forget_before(SimTime t);

private:
    friend class detail::PathBooking;

    // Breakpoints of the piecewise-constant used rate: the value at key k holds from k up to
    // the next key. The rate before the first key and after the last is 0. Adjacent entries
    // always differ (bookings merge equal neighbours), so back-to-back transfers do not grow
    // the map.
    using Steps = std::map<SimTime, std::int64_t>;

    // Cursors of one booking in progress (see detail::PathBooking). Keeping them here rather
    // than in a per-booking array is what makes a booking allocation free apart from map nodes.
    // The read cursor walks the original usage forwards; the write cursor trails it, marking
    // where the booking's pending constant-rate segment starts. Writing only when the booked
    // rate changes means a transfer whose rate never changes costs one split at each end,
    // however many breakpoints other resources of the path have.
    void open_cursor(SimTime t);
    std::int64_t cursor_spare() const { return capacity_ - read_->second; }
    SimTime cursor_segment_end() const { return read_end_; }
    void step_cursor_to(SimTime t);
    void write_until(SimTime t, std::int64_t rate);
    void close_cursor();
    Steps::iterator split_at(SimTime t);
    void erase_if_redundant(Steps::iterator it);

    std::string name_;
    std::int64_t capacity_;
    Steps used_;
    SimTime horizon_ = std::numeric_limits<SimTime>::min();
    double bytes_booked_ = 0;
    Steps::iterator read_{};   // entry in force at the booking's current instant
    SimTime read_end_ = 0;     // key after read_ (kNever if none): when the usage changes next
    Steps::iterator write_{};  // entry at the start of the booking's unwritten segment
    bool cursor_open_ = false;
};

// Books `bytes` over every resource of `path` (all at once, as one stream), starting at
// `start_ps`, at no more than `rate_cap_bytes_per_s`, and returns the time the last byte is
// moved (>= start_ps; == start_ps for 0 bytes). An empty path is limited by the cap alone.
// If some resource has no spare capacity the transfer waits for it to free up. The end time is
// rounded up to a whole picosecond.
//
// Throws SimError for a non-positive cap, bytes that are negative, not finite or beyond 2^53,
// a start outside [0, kNever), a resource listed twice in the path, a start before a
// resource's forget_before() horizon, or a transfer that could not finish before kNever.
//
// Cost: O(P log B) to find the start in each of the P calendars (B breakpoints each); then
// O(P) integer comparisons per breakpoint of any path resource inside [start, end); each
// calendar's own entries in that interval are updated once; new breakpoints appear only where
// the transfer's rate changes (hinted inserts, amortised O(1)). Nothing is allocated besides
// the map nodes of those breakpoints.
inline SimTime reference_book_transfer(std::span<ReferenceCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s);



namespace {

// Amount of data in units of 1e-12 byte, so that rate (bytes/s) * duration (ps) is a whole
// number of units. 128 bits hold rate * kNever for any int64 rate, and 2^53 bytes.
__extension__ typedef __int128 Units;

constexpr double kMaxBytes = 9007199254740992.0;  // 2^53: beyond this doubles skip integers
constexpr std::int64_t kUnitsPerByte = 1000 * 1000 * 1000 * 1000LL;

inline Units to_units(double bytes) {
    // Split so the whole part converts exactly; only the sub-byte fraction is rounded.
    const double whole = std::floor(bytes);
    const auto fraction = std::llround((bytes - whole) * static_cast<double>(kUnitsPerByte));
    return static_cast<Units>(static_cast<std::int64_t>(whole)) * kUnitsPerByte + fraction;
}

inline void check_request(SimTime start_ps, double bytes, std::int64_t rate_cap_bytes_per_s) {
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

inline ReferenceCalendar::ReferenceCalendar(std::string name, std::int64_t capacity_bytes_per_s)
    : name_(std::move(name)), capacity_(capacity_bytes_per_s) {
    if (capacity_ <= 0) {
        throw SimError("bandwidth resource '" + name_ + "': capacity must be positive, got " +
                       std::to_string(capacity_) + " bytes/s");
    }
}

inline std::int64_t ReferenceCalendar::used_at(SimTime t) const {
    const auto after = used_.upper_bound(t);
    return after == used_.begin() ? 0 : std::prev(after)->second;
}

inline void ReferenceCalendar::forget_before(SimTime t) {
    horizon_ = std::max(horizon_, t);
    const auto after = used_.upper_bound(t);
    if (after == used_.begin()) return;
    // Keep the entry in force at t (its key may be earlier; only its value matters now).
    const auto in_force = std::prev(after);
    used_.erase(used_.begin(), in_force);
    erase_if_redundant(in_force);  // a leading 0 equals the implicit rate before the first key
}

inline void ReferenceCalendar::open_cursor(SimTime t) {
    if (cursor_open_) {
        throw SimError("book_transfer: resource '" + name_ + "' appears twice in one path");
    }
    if (t < horizon_) {
        throw SimError("book_transfer: resource '" + name_ + "': start " + std::to_string(t) +
                       " ps is before its forgotten history (horizon " +
                       std::to_string(horizon_) + " ps)");
    }
    // Split the step function at t so the booking can change the rate from t on.
    auto at = used_.lower_bound(t);
    if (at == used_.end() || at->first != t) {
        const std::int64_t in_force = at == used_.begin() ? 0 : std::prev(at)->second;
        at = used_.emplace_hint(at, t, in_force);
    }
    read_ = write_ = at;
    read_end_ = std::next(at) == used_.end() ? kNever : std::next(at)->first;
    cursor_open_ = true;
}

// Moves the read cursor to instant t, which never lies beyond the next breakpoint.
inline void ReferenceCalendar::step_cursor_to(SimTime t) {
    if (t < read_end_) return;
    ++read_;
    const auto next = std::next(read_);
    read_end_ = next == used_.end() ? kNever : next->first;
}

// The entry starting exactly at t, inserting it if needed. t lies within the read cursor's
// segment or at its end, so the search is O(1).
inline ReferenceCalendar::Steps::iterator ReferenceCalendar::split_at(SimTime t) {
    if (read_->first == t) return read_;
    const auto next = std::next(read_);
    if (next != used_.end() && next->first == t) return next;
    return used_.emplace_hint(next, t, read_->second);
}

// Adds `rate` over [write cursor, t) and moves both cursors to t. The entries written are
// behind the read cursor, so the walk only ever reads usage not yet changed by this booking.
inline void ReferenceCalendar::write_until(SimTime t, std::int64_t rate) {
    const auto stop = split_at(t);
    for (auto it = write_; it != stop;) {
        const auto next = std::next(it);
        it->second += rate;
        erase_if_redundant(it);  // its predecessor is final now, so merging is safe
        it = next;
    }
    read_ = write_ = stop;
    read_end_ = std::next(stop) == used_.end() ? kNever : std::next(stop)->first;
}

inline void ReferenceCalendar::close_cursor() {
    erase_if_redundant(write_);
    cursor_open_ = false;
}

inline void ReferenceCalendar::erase_if_redundant(Steps::iterator it) {
    const std::int64_t before = it == used_.begin() ? 0 : std::prev(it)->second;
    if (it->second == before) used_.erase(it);
}

namespace detail {

// One booking in progress: opens a cursor on every calendar of the path, walks them forwards
// together step by step (a step ends at the next breakpoint of any of them), and closes the
// cursors again even when the booking throws, so the calendars stay consistent. A request
// rejected while opening (duplicate resource, start before the horizon) leaves no trace.
class PathBooking {
public:
    explicit PathBooking(std::span<ReferenceCalendar* const> path) : path_(path) {}
    PathBooking(const PathBooking&) = delete;
    PathBooking& operator=(const PathBooking&) = delete;
    ~PathBooking() {
        for (std::size_t i = 0; i < opened_; ++i) path_[i]->close_cursor();
    }

    // Walks forwards from `start` one step at a time (a step ends at the next breakpoint of any
    // path resource), accumulating steps of equal rate into one segment that is written to
    // the calendars only when the rate changes or the bytes run out.
    SimTime run(SimTime start, Units remaining, std::int64_t cap) {
        for (ReferenceCalendar* calendar : path_) {
            calendar->open_cursor(start);
            ++opened_;
        }
        SimTime t = start;
        std::int64_t segment_rate = current_step(cap).rate;
        for (;;) {
            const auto [rate, next] = current_step(cap);
            if (rate != segment_rate) {
                write_all(t, segment_rate);
                segment_rate = rate;
            }
            if (rate > 0) {
                const Units room = static_cast<Units>(rate) * (next - t);
                if (remaining <= room) {
                    // Round up: the last byte is only moved at the end of its picosecond.
                    const SimTime end = t + static_cast<SimTime>((remaining + rate - 1) / rate);
                    write_all(end, rate);
                    return end;
                }
                remaining -= room;
            }
            if (next >= kNever) {
                throw SimError("book_transfer: transfer starting at " + std::to_string(start) +
                               " ps cannot finish within the simulated time range");
            }
            for (ReferenceCalendar* calendar : path_) calendar->step_cursor_to(next);
            t = next;  // rate 0 simply waits here for the next breakpoint
        }
    }

    void count_bytes(double bytes) {
        for (ReferenceCalendar* calendar : path_) calendar->bytes_booked_ += bytes;
    }

private:
    struct Step {
        std::int64_t rate;  // what this transfer gets from the current instant on
        SimTime until;      // the next breakpoint of any path resource (or kNever)
    };

    Step current_step(std::int64_t cap) const {
        Step step{cap, kNever};
        for (const ReferenceCalendar* calendar : path_) {
            step.rate = std::min(step.rate, calendar->cursor_spare());
            step.until = std::min(step.until, calendar->cursor_segment_end());
        }
        return step;
    }

    void write_all(SimTime until, std::int64_t rate) {
        for (ReferenceCalendar* calendar : path_) calendar->write_until(until, rate);
    }

    std::span<ReferenceCalendar* const> path_;
    std::size_t opened_ = 0;
};

}  // namespace detail

inline SimTime reference_book_transfer(std::span<ReferenceCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s) {
    check_request(start_ps, bytes, rate_cap_bytes_per_s);
    const Units units = to_units(bytes);
    if (units == 0) return start_ps;
    detail::PathBooking booking(path);
    const SimTime end = booking.run(start_ps, units, rate_cap_bytes_per_s);
    booking.count_bytes(bytes);
    return end;
}

}  // namespace tandem::reference
