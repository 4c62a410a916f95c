#pragma once
// Usage of a shared resource that others booked (another stream's transfers through the same
// memory, learned at a barrier), kept as bytes per fixed bin of simulated time. Adding usage is
// O(1) per bin; a booking reads a sum of such stores (UsageSum) as a step function whose rate
// changes only at bin edges (book_transfer's `background`, sim/net/bandwidth_calendar.hpp).
// Coarser than a calendar of its own, and much cheaper: other streams' usage arrives as many
// small records per window.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/share/bin_pages.hpp"
#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class BinnedUsage {
public:
    // `bin_ps`: the bins' length (positive).
    explicit BinnedUsage(SimTime bin_ps);

    SimTime bin_ps() const { return bin_ps_; }

    // `bytes` spread evenly over [start, end). Bins before the horizon are not kept.
    void add(SimTime start, SimTime end, double bytes) {
        if (end <= start) return;
        add_over(start, end, start / bin_ps_, (end - 1) / bin_ps_, bytes);
    }
    // add() with the bins of `start` and of `end - 1` already worked out (start / bin_ps(),
    // (end - 1) / bin_ps()): a caller adding one span to several stores divides once, by a
    // constant it knows.
    void add_over(SimTime start, SimTime end, std::int64_t first, std::int64_t last, double bytes) {
        if (end <= start || bytes <= 0) return;
        if (first == last) {  // the usual case: published usage is one bin
            add_to_bin(first, bytes);
        } else {
            add_spread(start, end, first, last, bytes);
        }
    }
    // `bytes` in bin number `bin` (covering [bin * bin_ps, (bin + 1) * bin_ps)).
    void add_to_bin(std::int64_t bin, double bytes) {
        if (!(bytes > 0) || bin < horizon_bin_) return;  // forgotten history: nothing reads it again
        double& b = *pages_.slot(bin);
        b += bytes;
        max_bytes_ = std::max(max_bytes_, b);
        note_kept(bin, bin + 1);
    }
    // `bytes` in each bin of [first, end): the same sums as add_to_bin bin by bin (a published
    // run of equal bins: a long remote store is hundreds).
    void add_to_bins(std::int64_t first, std::int64_t end, double bytes);

    // The bytes of bin number `bin` (0 outside what is kept).
    double bytes_in(std::int64_t bin) const {
        if (bin < lo_ || bin >= hi_) return 0.0;
        return pages_.at(bin);
    }
    // The bins kept lie in [first_bin(), end_bin()) (first_bin() == end_bin() when there is none).
    std::int64_t first_bin() const { return lo_; }
    std::int64_t end_bin() const { return hi_; }
    bool empty() const { return lo_ >= hi_; }
    // The first bin at or after `bin` that may hold bytes (end_bin() if none): bins are kept in
    // pages, made only where bytes were added, so a walk over a sparse store skips the gaps.
    std::int64_t next_kept_bin(std::int64_t bin) const;
    // No bin kept holds more than this (a bound, not always reached: for a quick "cannot matter").
    double max_bin_bytes() const { return max_bytes_; }
    // Pages of bins held (a memory gauge, for tests).
    std::size_t pages_held() const { return pages_.pages_held(); }

    // Drops the bins that end at or before t (nothing will be read before t again).
    void forget_before(SimTime t);
    void clear();

private:
    // Emptied pages kept for reuse at most (a store is emptied every window by some callers).
    static constexpr std::size_t kSparePages = 64;

    void note_kept(std::int64_t from, std::int64_t to) {
        if (lo_ >= hi_) {
            lo_ = from;
            hi_ = to;
            return;
        }
        lo_ = std::min(lo_, from);
        hi_ = std::max(hi_, to);
    }
    void release_all();
    void add_spread(SimTime start, SimTime end, std::int64_t first, std::int64_t last, double bytes);

    SimTime bin_ps_;
    std::int64_t lo_ = 0;           // bins with bytes lie in [lo_, hi_)
    std::int64_t hi_ = 0;
    std::int64_t horizon_bin_ = 0;  // bins before it are forgotten
    // Bins in pages made where bytes land (sim/share/bin_pages.hpp): usage booked far ahead and
    // scattered costs the pages it touches, not the whole span between them.
    BinPages pages_{kSparePages};
    static constexpr std::int64_t kRecomputeMaxAfterBins = 16;
    double max_bytes_ = 0;
    std::int64_t dropped_since_max_ = 0;
};

// A signed sum of a few BinnedUsage stores of the same bin length, read as a rate: what a booking
// sees beside its own calendar. Rates are rounded to whole `rate_step`s (at least one step where
// the sum is positive), so that the calendars booked beside it see few distinct rates
// (sim/net/breakpoint_list.hpp keeps them in a small table).
class UsageSum {
public:
    static constexpr int kMaxTerms = 4;

    explicit UsageSum(std::int64_t rate_step_bytes_per_s) : rate_step_(rate_step_bytes_per_s) {}
    // Null terms are skipped. Throws SimError past kMaxTerms or for a different bin length.
    UsageSum& plus(const BinnedUsage* u) { return term(u, 1.0); }
    UsageSum& minus(const BinnedUsage* u) { return term(u, -1.0); }

    std::int64_t rate_step() const { return rate_step_; }

    // The rate at t, in bytes per second.
    std::int64_t rate_at(SimTime t) const {
        if (count_ == 0) return 0;
        const std::int64_t bin = t / bin_ps_;
        double bytes = 0;
        for (int i = 0; i < count_; ++i) bytes += sign_[i] * terms_[i]->bytes_in(bin);
        return to_rate(bytes);
    }
    // No rate_at() exceeds this.
    std::int64_t max_rate() const {
        double bytes = 0;
        for (int i = 0; i < count_; ++i) {
            if (sign_[i] > 0) bytes += terms_[i]->max_bin_bytes();
        }
        return to_rate(bytes);
    }
    // When the rate read at t may change next: the end of t's bin, or kNever past every bin with
    // bytes.
    SimTime next_change(SimTime t) const {
        const std::int64_t bin = t / bin_ps_;
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        bool later = false;
        for (int i = 0; i < count_; ++i) {
            if (bin >= terms_[i]->end_bin()) continue;
            later = true;
            first = std::min(first, terms_[i]->first_bin());
        }
        if (!later) return kNever;
        return bin < first ? first * bin_ps_ : (bin + 1) * bin_ps_;
    }

private:
    std::int64_t to_rate(double bytes) const {
        if (bytes <= 0) return 0;
        const double steps = bytes * 1.0e12 / static_cast<double>(bin_ps_) / static_cast<double>(rate_step_);
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(steps + 0.5)) * rate_step_;
    }
    UsageSum& term(const BinnedUsage* u, double sign) {
        if (u == nullptr || u->empty()) return *this;
        if (count_ == kMaxTerms) throw SimError("UsageSum: more than 4 terms");
        if (count_ > 0 && u->bin_ps() != bin_ps_) throw SimError("UsageSum: terms of different bin lengths");
        bin_ps_ = u->bin_ps();
        terms_[static_cast<std::size_t>(count_)] = u;
        sign_[static_cast<std::size_t>(count_)] = sign;
        ++count_;
        return *this;
    }

    std::int64_t rate_step_;
    SimTime bin_ps_ = 1;
    std::array<const BinnedUsage*, kMaxTerms> terms_{};
    std::array<double, kMaxTerms> sign_{};
    int count_ = 0;
};

}  // namespace tandem
