#include "sim/share/binned_usage.hpp"

#include <algorithm>
#include <memory>

namespace tandem {

BinnedUsage::BinnedUsage(SimTime bin_ps) : bin_ps_(bin_ps) {
    if (bin_ps_ <= 0) throw SimError("BinnedUsage: the bin length must be positive");
}

void BinnedUsage::release_all() {
    pages_.clear();
    lo_ = hi_ = 0;
}

void BinnedUsage::add_to_bins(std::int64_t first, std::int64_t end, double bytes) {
    if (!(bytes > 0)) return;
    first = std::max(first, horizon_bin_);  // forgotten history: nothing reads it again
    if (end <= first) return;
    double top = max_bytes_;
    for (std::int64_t bin = first; bin < end;) {
        double* slot = pages_.slot(bin);
        const std::int64_t page_end = std::min(end, BinPages::page_end_bin(bin));
        for (double* const stop = slot + (page_end - bin); slot < stop; ++slot) {
            *slot += bytes;
            top = std::max(top, *slot);
        }
        bin = page_end;
    }
    max_bytes_ = top;
    note_kept(first, end);
}

void BinnedUsage::add_spread(SimTime start, SimTime end, std::int64_t first, std::int64_t last, double bytes) {
    const double span = static_cast<double>(end - start);
    // The whole bins between the first and the last take the same share, computed once (the
    // same expression as for a partial bin, so the sums are the same as bin by bin).
    const double per_whole_bin = bytes * static_cast<double>(bin_ps_) / span;
    add_to_bin(first, bytes * static_cast<double>(std::min(end, (first + 1) * bin_ps_) - start) / span);
    add_to_bins(first + 1, last, per_whole_bin);
    add_to_bin(last, bytes * static_cast<double>(end - last * bin_ps_) / span);
}

std::int64_t BinnedUsage::next_kept_bin(std::int64_t bin) const {
    bin = std::max(bin, lo_);
    while (bin < hi_) {
        if (pages_.held(bin)) return bin;
        bin = BinPages::page_end_bin(bin);
    }
    return hi_;
}

void BinnedUsage::forget_before(SimTime t) {
    horizon_bin_ = std::max(horizon_bin_, t / bin_ps_);  // t's own bin is still read
    if (empty() || lo_ >= horizon_bin_) return;
    const std::int64_t drop = std::min(horizon_bin_, hi_) - lo_;
    lo_ = horizon_bin_;
    if (lo_ >= hi_) {
        release_all();
    } else {
        // Pages wholly before the horizon go; the one holding it stays (its earlier bins are
        // below lo_ and never read).
        pages_.drop_pages_before(horizon_bin_);
    }
    // The bound follows what is kept, so that a past peak does not make every later booking walk
    // its bins; recomputed now and then (between, it is still a bound, only a looser one): once
    // as many bins have been dropped as are kept, so that it costs O(1) per bin on average (a
    // view's others' usage may reach far ahead: a long remote store into its chip).
    dropped_since_max_ += drop;
    if (dropped_since_max_ < std::max(kRecomputeMaxAfterBins, hi_ - lo_)) return;
    dropped_since_max_ = 0;
    max_bytes_ = 0;
    for (std::int64_t bin = next_kept_bin(lo_); bin < hi_; bin = next_kept_bin(bin + 1)) {
        max_bytes_ = std::max(max_bytes_, bytes_in(bin));
    }
}

void BinnedUsage::clear() {
    release_all();
    horizon_bin_ = 0;
    max_bytes_ = 0;
    dropped_since_max_ = 0;
}

}  // namespace tandem
