#include "sim/net/bandwidth_calendar.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
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
    const auto fraction = std::llround((bytes - whole) * static_cast<double>(kUnitsPerByte));
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
    if (start_ps >= kNever) {
        throw SimError("book_transfer: start time " + std::to_string(start_ps) +
                       " ps is beyond the simulated time range");
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
    const auto after = used_.upper_bound(t);
    return after == used_.begin() ? 0 : std::prev(after)->second;
}

void BandwidthCalendar::forget_before(SimTime t) {
    horizon_ = std::max(horizon_, t);
    const auto after = used_.upper_bound(t);
    if (after == used_.begin()) return;
    // Keep the entry in force at t (its key may be earlier; only its value matters now).
    const auto in_force = std::prev(after);
    used_.erase(used_.begin(), in_force);
    erase_if_redundant(in_force);  // a leading 0 equals the implicit rate before the first key
}

void BandwidthCalendar::open_cursor(SimTime t) {
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
    cursor_ = at;
    cursor_open_ = true;
}

SimTime BandwidthCalendar::cursor_segment_end() const {
    const auto next = std::next(cursor_);
    return next == used_.end() ? kNever : next->first;
}

// Adds `rate` over [cursor, end) and moves the cursor to `end`. `end` never lies beyond the
// next breakpoint, so the whole span has one value and only the cursor entry changes.
void BandwidthCalendar::advance_cursor(SimTime end, std::int64_t rate) {
    auto next = std::next(cursor_);
    if (next == used_.end() || next->first > end) {
        next = used_.emplace_hint(next, end, cursor_->second);
    }
    cursor_->second += rate;
    erase_if_redundant(cursor_);  // its predecessor is final now, so merging is safe
    cursor_ = next;
}

void BandwidthCalendar::close_cursor() {
    erase_if_redundant(cursor_);
    cursor_open_ = false;
}

void BandwidthCalendar::erase_if_redundant(Steps::iterator it) {
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
    explicit PathBooking(std::span<BandwidthCalendar* const> path) : path_(path) {}
    PathBooking(const PathBooking&) = delete;
    PathBooking& operator=(const PathBooking&) = delete;
    ~PathBooking() {
        for (std::size_t i = 0; i < opened_; ++i) path_[i]->close_cursor();
    }

    SimTime run(SimTime start, Units remaining, std::int64_t cap) {
        for (BandwidthCalendar* calendar : path_) {
            calendar->open_cursor(start);
            ++opened_;
        }
        SimTime t = start;
        for (;;) {
            const auto [rate, next] = current_step(cap);
            if (rate > 0) {
                const Units room = static_cast<Units>(rate) * (next - t);
                if (remaining <= room) {
                    // Round up: the last byte is only moved at the end of its picosecond.
                    const SimTime end = t + static_cast<SimTime>((remaining + rate - 1) / rate);
                    advance_all(end, rate);
                    return end;
                }
                remaining -= room;
            }
            if (next >= kNever) {
                throw SimError("book_transfer: transfer starting at " + std::to_string(start) +
                               " ps cannot finish within the simulated time range");
            }
            advance_all(next, rate);  // rate 0: wait for the next breakpoint
            t = next;
        }
    }

    void count_bytes(double bytes) {
        for (BandwidthCalendar* calendar : path_) calendar->bytes_booked_ += bytes;
    }

private:
    struct Step {
        std::int64_t rate;  // what this transfer gets from the current instant on
        SimTime until;      // the next breakpoint of any path resource (or kNever)
    };

    Step current_step(std::int64_t cap) const {
        Step step{cap, kNever};
        for (const BandwidthCalendar* calendar : path_) {
            step.rate = std::min(step.rate, calendar->cursor_spare());
            step.until = std::min(step.until, calendar->cursor_segment_end());
        }
        return step;
    }

    void advance_all(SimTime end, std::int64_t rate) {
        for (BandwidthCalendar* calendar : path_) calendar->advance_cursor(end, rate);
    }

    std::span<BandwidthCalendar* const> path_;
    std::size_t opened_ = 0;
};

}  // namespace detail

SimTime book_transfer(std::span<BandwidthCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s) {
    check_request(start_ps, bytes, rate_cap_bytes_per_s);
    const Units units = to_units(bytes);
    if (units == 0) return start_ps;
    detail::PathBooking booking(path);
    const SimTime end = booking.run(start_ps, units, rate_cap_bytes_per_s);
    booking.count_bytes(bytes);
    return end;
}

}  // namespace tandem
