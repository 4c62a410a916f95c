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
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/sim_time.hpp"

namespace tandem {

namespace detail {
class PathBooking;  // the booking walk of book_transfer(); see bandwidth_calendar.cpp
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
SimTime book_transfer(std::span<BandwidthCalendar* const> path, SimTime start_ps, double bytes,
                      std::int64_t rate_cap_bytes_per_s);

}  // namespace tandem
