#pragma once
// A shared bandwidth resource booked in fixed bins of simulated time: a chip's L2 or its HBM,
// which dozens of cores book at once.
//
// An exact calendar (sim/net/bandwidth_calendar.hpp) keeps every rate change of every transfer.
// A chip's L2 serves 24 cube cores, 48 vector cores and the peers writing into the chip, whose
// loads overlap all the time: an exact booking there crosses and rewrites the breakpoints of
// every other load in flight (a dozen or more), and that cost grows with the cores, not with
// the bytes. Here a resource keeps only the bytes booked in each bin, as if spread evenly over
// it, and a transfer takes, bin after bin, min(its own rate cap, what the bin has left per
// second on every resource of its path, less the others' usage read beside it). Its cost is
// the number of bins it spans. "First come keeps its share" holds as in the exact calendar:
// later bookings get what is left; the difference is that inside one bin the earlier bytes are
// taken as spread over the whole bin, not placed where they were (a bin is a few tens of
// nanoseconds: a few per panel load).
//
// The bins are counted from an origin, not from time 0: a stream's calendars take the start of
// its kernel's first booking, so that the same kernel started at another instant books the same
// bins and takes the same time (an exact calendar has that by nature).
//
// The bins are kept in pages (sim/share/bin_pages.hpp), made only where bookings land: a block's scalar
// issues its loads long before its pipes run them, so a calendar's bookings reach milliseconds
// past its horizon with few bytes between (a comm kernel's 64 ns bins were under 1% booked over
// 9 ms), and a page costs only where bytes are.
//
// Results depend only on the order of the bookings, never on the host.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/share/bin_pages.hpp"
#include "sim/share/binned_usage.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class BinnedCalendar {
public:
    // Bin b covers [origin_ps + b * bin_ps, origin_ps + (b + 1) * bin_ps). Throws SimError if the
    // capacity or the bin length is not positive.
    BinnedCalendar(std::string name, std::int64_t capacity_bytes_per_s, SimTime bin_ps, SimTime origin_ps = 0);
    BinnedCalendar(const BinnedCalendar&) = delete;
    BinnedCalendar& operator=(const BinnedCalendar&) = delete;

    const std::string& name() const { return name_; }
    std::int64_t capacity() const { return capacity_; }
    SimTime bin_ps() const { return bin_ps_; }
    SimTime origin() const { return origin_; }
    // The bin holding instant t.
    std::int64_t bin_of(SimTime t) const {
        const SimTime d = t - origin_;
        return d >= 0 ? d / bin_ps_ : -((-d + bin_ps_ - 1) / bin_ps_);
    }

    // Bytes booked in bin number `bin` (0 before the horizon's bin: forgotten).
    double bytes_in(std::int64_t bin) const {
        return bin < keep_from_bin_ ? 0.0 : pages_.at(bin);
    }
    // Total bytes of all transfers booked on this resource, for utilisation reports.
    double bytes_booked() const { return bytes_booked_; }
    // Bins held in pages (forgotten pages excluded): a memory gauge.
    std::size_t bins_kept() const { return pages_.pages_held() * static_cast<std::size_t>(BinPages::kPageBins); }

    // Empty again, its bins counted from `origin_ps` (a new kernel's calendar), keeping the memory
    // it has (a calendar spans its kernel's bookings: tens of thousands of bins, grown again from
    // nothing for every kernel otherwise).
    void restart(SimTime origin_ps);
    // Drops the bins that end at or before t. The caller promises that no later booking starts
    // before t; book_binned() throws SimError if one does.
    void forget_before(SimTime t);

private:
    friend SimTime book_binned(std::span<BinnedCalendar* const>, SimTime, double, std::int64_t,
                               std::span<const UsageSum* const>);

    // Emptied pages kept for reuse at most (a restarted calendar books its next kernel in them).
    static constexpr std::size_t kSparePages = 256;
    // The bytes booked in bin `bin`, in its page (made if need be): the bins from it to
    // BinPages::page_end_bin(bin) follow it.
    double* slot(std::int64_t bin) { return pages_.slot(bin); }
    // book_binned() on a path of this resource alone (`background`: null, or one whose bins hold
    // bytes).
    SimTime book_alone(SimTime start_ps, double bytes, std::int64_t rate_cap_bytes_per_s, const UsageSum* background);

    std::string name_;
    std::int64_t capacity_;
    SimTime bin_ps_;
    SimTime origin_;
    double bin_bytes_;  // what one bin holds at full capacity
    // The bins, in pages numbered bin >> kPageShift whatever the origin, so that the calendars of
    // one path have their page edges at the same bins; pages before the horizon's are released.
    BinPages pages_{kSparePages};
    std::int64_t keep_from_bin_ = std::numeric_limits<std::int64_t>::min();  // the horizon's bin
    SimTime horizon_ = 0;
    double bytes_booked_ = 0;
};

// Books `bytes` over every resource of `path` (all at once, as one stream; all of one bin
// length and origin), starting at `start_ps`, at no more than `rate_cap_bytes_per_s`, and returns the time
// the last byte is moved (> start_ps; == start_ps for 0 bytes), rounded up to a whole
// picosecond. `background` (empty, or one entry per path resource, null where there is none):
// usage of the same resource that others booked, read as a rate that counts against the
// resource's capacity, never written.
//
// Throws SimError for a non-positive cap, bytes that are negative, not finite or beyond 2^53, a
// start outside [0, kNever), an empty path, resources of different bins or listed twice,
// or a start before a resource's forget_before() horizon.
SimTime book_binned(std::span<BinnedCalendar* const> path, SimTime start_ps, double bytes,
                    std::int64_t rate_cap_bytes_per_s, std::span<const UsageSum* const> background = {});

}  // namespace tandem
