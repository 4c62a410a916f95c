#pragma once
// A shared bandwidth resource booked over simulated time: one direction of a link, or a chip's
// shared memory fabric.
//
// Transfers are booked one at a time and each booking is final. In every instant a transfer
// takes min(its own rate cap, the spare capacity of every resource on its path), from its start
// time until its bytes are moved; later bookings get what is left ("first come keeps its
// share"). This gives the right aggregate throughput under contention, and the result depends
// only on the order of the bookings, never on the host.
//
// Rates are whole bytes per second and the amount moved is counted in exact integer units
// (rate * picoseconds), so sums of rates and of bytes carry no floating-point residue.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/share/binned_usage.hpp"
#include "sim/net/breakpoint_list.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

namespace detail {
struct BookingCursor;  // the booking walk of book_transfer(); see bandwidth_calendar.cpp
}

class BandwidthCalendar {
public:
    // Throws SimError if the capacity is not positive.
    BandwidthCalendar(std::string name, std::int64_t capacity_bytes_per_s);

    const std::string& name() const { return name_; }
    std::int64_t capacity() const { return capacity_; }

    // Rate booked at instant t, in bytes per second (0 <= used_at(t) <= capacity()).
    // Meaningless for t before the last forget_before() horizon.
    std::int64_t used_at(SimTime t) const;

    // Total bytes of all transfers booked on this resource, for utilisation reports.
    double bytes_booked() const { return bytes_booked_; }

    // Number of breakpoints of the usage step function currently stored (memory/cost gauge).
    std::size_t breakpoint_count() const { return points_.size(); }

    // The booked rate as a step function: (time, bytes per second from then on), in time order,
    // for the history not yet forgotten.
    std::vector<std::pair<SimTime, std::int64_t>> steps() const { return points_.to_vector(); }

    // Drops the usage history strictly before t. The caller promises that no later booking
    // starts before t; book_transfer() throws SimError if one does.
    void forget_before(SimTime t);

private:
    friend SimTime book_transfer(std::span<BandwidthCalendar* const>, SimTime, double, std::int64_t,
                                 std::span<const UsageSum* const>, std::vector<Breakpoint>*);
    friend struct detail::BookingCursor;

    // Adds the booking's rates to the step function: segments[i].rate from segments[i].t until
    // the next segment (the last one until `end`). `at` and `found` are where
    // find_last_at_or_before(segments[0].t) left the list.
    void add(const Breakpoint* segments, std::size_t count, SimTime end, BreakpointList::Pos at, bool found);

    std::string name_;
    std::int64_t capacity_;
    // Breakpoints of the piecewise-constant used rate: each rate holds from its time up to the
    // next breakpoint's. The rate before the first breakpoint and after the last is 0. The
    // function is stored canonically: no breakpoint repeats the rate before it (bookings merge
    // equal neighbours, so back-to-back transfers do not grow it), so the same bookings give the
    // same breakpoints however they were stored.
    BreakpointList points_;
    SimTime horizon_ = std::numeric_limits<SimTime>::min();
    double bytes_booked_ = 0;
    std::vector<Breakpoint> scratch_;  // the new breakpoints of a booking, reused
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
// Cost: one search per calendar of the path (interpolation over its leaves, then inside one),
// O(P) integer comparisons per breakpoint of any path resource inside [start, end), then one
// merge per calendar of its breakpoints in [start, end] with the transfer's rate changes, moved
// into place within (usually) one leaf. Nothing is allocated once the calendars have warmed up.
//
// `background` (empty, or one entry per path resource, null where there is none): usage of the
// same resource that others booked, kept apart in bins (UsageSum, sim/share/binned_usage.hpp) so that it
// neither grows this calendar nor multiplies its distinct rates. A background's rate counts
// against its resource's capacity like the resource's own bookings; it is read, never written.
//
// `rates_out` (optional): the transfer's rate changes, (from this time on, this rate) until the
// returned end, for a caller that hands the transfer's usage on (sim/net/link_view.hpp).
SimTime book_transfer(std::span<BandwidthCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s, std::span<const UsageSum* const> background = {},
                      std::vector<Breakpoint>* rates_out = nullptr);

}  // namespace tandem
