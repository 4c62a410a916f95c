#include "sim/net/binned_calendar.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/sim_error.hpp"

namespace tandem {

namespace {

constexpr double kMaxBinnedBytes = 9007199254740992.0;  // 2^53, as book_transfer
constexpr double kBinnedPsPerSecond = 1.0e12;

// One resource of a path during a booking, and the background read beside it. A UsageSum
// changes only at its own (longer) bins' edges, so it is read once per change, not per bin.
// (No member initializers: book_binned sets the path's cursors and leaves the others alone.)
struct BinnedCursor {
    BinnedCalendar* calendar;
    double* slot;           // the bytes booked in the walk's bin
    double bin_bytes;       // what a bin of this resource holds
    const UsageSum* background;
    double background_bytes;  // the background's bytes per bin, until `background_until`
    SimTime background_until;
};

}  // namespace

BinnedCalendar::BinnedCalendar(std::string name, std::int64_t capacity_bytes_per_s, SimTime bin_ps, SimTime origin_ps)
    : name_(std::move(name)),
      capacity_(capacity_bytes_per_s),
      bin_ps_(bin_ps),
      origin_(origin_ps),
      bin_bytes_(static_cast<double>(capacity_bytes_per_s) * static_cast<double>(bin_ps) / kBinnedPsPerSecond) {
    if (capacity_ <= 0) {
        throw SimError("bandwidth resource '" + name_ + "': capacity must be positive, got " +
                       std::to_string(capacity_) + " bytes/s");
    }
    if (bin_ps <= 0) {
        throw SimError("bandwidth resource '" + name_ + "': bin length must be positive, got " +
                       std::to_string(bin_ps) + " ps");
    }
}

void BinnedCalendar::restart(SimTime origin_ps) {
    origin_ = origin_ps;
    pages_.clear();
    keep_from_bin_ = std::numeric_limits<std::int64_t>::min();
    horizon_ = 0;
    bytes_booked_ = 0;
}

void BinnedCalendar::forget_before(SimTime t) {
    horizon_ = std::max(horizon_, t);
    keep_from_bin_ = bin_of(horizon_);  // t's own bin is still booked into
    // Pages wholly before the horizon's bin go; the one holding it stays (its earlier bins are
    // never booked into again, and bytes_in() reads them as 0).
    pages_.drop_pages_before(keep_from_bin_);
}

SimTime BinnedCalendar::book_alone(SimTime start_ps, double bytes, std::int64_t rate_cap_bytes_per_s,
                                   const UsageSum* background) {
    // book_binned's walk for a path of one resource (most bookings: an L2 hit), with the same
    // arithmetic in the same order, so that it ends exactly where the walk would. The first bin
    // may be partial; every later one is whole, so what it takes is `full` itself.
    const double bin_ps_d = static_cast<double>(bin_ps_);
    const double cap_bytes = static_cast<double>(rate_cap_bytes_per_s) * bin_ps_d / kBinnedPsPerSecond;  // per bin
    double remaining = bytes;
    SimTime t = start_ps;
    std::int64_t bin = bin_of(t);
    SimTime bin_end = origin_ + (bin + 1) * bin_ps_;
    double* slot = this->slot(bin);
    double* page_end = slot + (BinPages::page_end_bin(bin) - bin);
    // The background's bytes per bin, read again where it may change (at its own bins' edges).
    double background_bytes = 0;
    SimTime background_until = background != nullptr ? std::numeric_limits<SimTime>::min() : kNever;
    const auto spare = [&] {
        double s = bin_bytes_ - *slot;
        if (background != nullptr) {
            if (t >= background_until) {
                background_bytes = static_cast<double>(background->rate_at(t)) * bin_ps_d / kBinnedPsPerSecond;
                background_until = background->next_change(t);
            }
            s -= background_bytes;
        }
        return s;
    };
    const auto finish = [&](double full) {
        // Rounded up: the last byte is only moved at the end of its picosecond.
        const double need_ps = std::ceil(remaining * bin_ps_d / full);
        *slot += remaining;
        bytes_booked_ += bytes;
        return std::min(bin_end, t + std::max<SimTime>(1, static_cast<SimTime>(need_ps)));
    };
    {
        const double full = std::min(cap_bytes, spare());
        if (full > 0) {
            const SimTime span = bin_end - t;
            const double room = span == bin_ps_ ? full : full * static_cast<double>(span) / bin_ps_d;
            if (remaining <= room) return finish(full);
            *slot += room;
            remaining -= room;
        }
    }
    for (;;) {
        if (bin_end >= kNever) {
            throw SimError("book_binned: transfer starting at " + std::to_string(start_ps) +
                           " ps cannot finish within the simulated time range");
        }
        t = bin_end;  // a full bin simply waits for the next one
        bin_end += bin_ps_;
        ++bin;
        if (++slot == page_end) {
            slot = this->slot(bin);
            page_end = slot + BinPages::kPageBins;
        }
        const double full = std::min(cap_bytes, spare());
        if (full > 0) {
            if (remaining <= full) return finish(full);
            *slot += full;
            remaining -= full;
        }
    }
}

SimTime book_binned(std::span<BinnedCalendar* const> path, SimTime start_ps, double bytes,
                    std::int64_t rate_cap_bytes_per_s, std::span<const UsageSum* const> background) {
    if (rate_cap_bytes_per_s <= 0) {
        throw SimError("book_binned: rate cap must be positive, got " + std::to_string(rate_cap_bytes_per_s) +
                       " bytes/s");
    }
    if (!(bytes >= 0.0 && bytes <= kMaxBinnedBytes)) {  // also rejects NaN
        throw SimError("book_binned: byte count must be in [0, 2^53], got " + std::to_string(bytes));
    }
    if (start_ps < 0 || start_ps >= kNever) {
        throw SimError("book_binned: start time " + std::to_string(start_ps) +
                       " ps is outside the simulated time range [0, kNever)");
    }
    constexpr std::size_t kMaxPath = 4;
    if (path.empty() || path.size() > kMaxPath) {
        throw SimError("book_binned: a path of 1 to 4 resources, got " + std::to_string(path.size()));
    }
    if (!background.empty() && background.size() != path.size()) {
        throw SimError("book_binned: " + std::to_string(background.size()) + " backgrounds for a path of " +
                       std::to_string(path.size()));
    }
    const SimTime bin_ps = path[0]->bin_ps();
    std::array<BinnedCursor, kMaxPath> cursors;  // those of the path only are set
    for (std::size_t i = 0; i < path.size(); ++i) {
        BinnedCalendar& c = *path[i];
        if (std::find(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i), path[i]) !=
            path.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw SimError("book_binned: resource '" + c.name_ + "' appears twice in one path");
        }
        if (c.bin_ps() != bin_ps || c.origin() != path[0]->origin()) {
            throw SimError("book_binned: resource '" + c.name_ + "' has bins of " + std::to_string(c.bin_ps()) +
                           " ps from " + std::to_string(c.origin()) + " ps, '" + path[0]->name_ + "' of " +
                           std::to_string(bin_ps) + " ps from " + std::to_string(path[0]->origin()) + " ps");
        }
        if (start_ps < c.horizon_) {
            throw SimError("book_binned: resource '" + c.name_ + "': start " + std::to_string(start_ps) +
                           " ps is before its forgotten history (horizon " + std::to_string(c.horizon_) + " ps)");
        }
        BinnedCursor& cursor = cursors[i];
        cursor.calendar = &c;
        cursor.slot = nullptr;
        cursor.bin_bytes = c.bin_bytes_;
        cursor.background = nullptr;
        cursor.background_bytes = 0;
        cursor.background_until = std::numeric_limits<SimTime>::min();
        if (!background.empty() && background[i] != nullptr && background[i]->max_rate() > 0) {
            cursor.background = background[i];
        }
    }
    if (bytes == 0) return start_ps;
    if (path.size() == 1) return path[0]->book_alone(start_ps, bytes, rate_cap_bytes_per_s, cursors[0].background);
    const double bin_ps_d = static_cast<double>(bin_ps);
    const double cap_bytes = static_cast<double>(rate_cap_bytes_per_s) * bin_ps_d / kBinnedPsPerSecond;  // per bin
    const std::span<BinnedCursor> used(cursors.data(), path.size());
    double remaining = bytes;
    SimTime t = start_ps;
    const SimTime origin = path[0]->origin();
    std::int64_t bin = path[0]->bin_of(t);
    std::int64_t page_end = bin;  // the bins before it have slots ready (pages end at the same bins)
    for (;;) {
        if (bin == page_end) {
            page_end = BinPages::page_end_bin(bin);
            for (BinnedCursor& c : used) c.slot = c.calendar->slot(bin);
        }
        const SimTime bin_end = origin + (bin + 1) * bin_ps;
        // What this transfer gets in this bin, in bytes over the whole bin: its cap, or what the
        // bin has left on its most loaded resource (the bytes booked in it taken as spread over it).
        double full = cap_bytes;
        for (BinnedCursor& c : used) {
            double spare = c.bin_bytes - *c.slot;
            if (c.background != nullptr) {
                if (t >= c.background_until) {
                    c.background_bytes = static_cast<double>(c.background->rate_at(t)) * bin_ps_d / kBinnedPsPerSecond;
                    c.background_until = c.background->next_change(t);
                }
                spare -= c.background_bytes;
            }
            full = std::min(full, spare);
        }
        if (full > 0) {
            const SimTime span = bin_end - t;
            const double room = span == bin_ps ? full : full * static_cast<double>(span) / bin_ps_d;
            if (remaining <= room) {
                // Rounded up: the last byte is only moved at the end of its picosecond.
                const double need_ps = std::ceil(remaining * bin_ps_d / full);
                const SimTime end = std::min(bin_end, t + std::max<SimTime>(1, static_cast<SimTime>(need_ps)));
                for (BinnedCursor& c : used) {
                    *c.slot += remaining;
                    c.calendar->bytes_booked_ += bytes;
                }
                return end;
            }
            for (BinnedCursor& c : used) *c.slot += room;
            remaining -= room;
        }
        if (bin_end >= kNever) {
            throw SimError("book_binned: transfer starting at " + std::to_string(start_ps) +
                           " ps cannot finish within the simulated time range");
        }
        for (BinnedCursor& c : used) ++c.slot;
        t = bin_end;  // a full bin simply waits for the next one
        ++bin;
    }
}

}  // namespace tandem
