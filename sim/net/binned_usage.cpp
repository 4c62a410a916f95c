#include "sim/net/binned_usage.hpp"

#include <algorithm>

namespace tandem {

BinnedUsage::BinnedUsage(SimTime bin_ps) : bin_ps_(bin_ps) {
    if (bin_ps_ <= 0) throw SimError("BinnedUsage: the bin length must be positive");
}

void BinnedUsage::add_to_new_bin(std::int64_t bin, double bytes) {
    if (bytes <= 0 || bin < horizon_bin_) return;  // forgotten history: nothing reads it again
    if (empty()) {
        bytes_.clear();
        head_ = 0;
        first_bin_ = bin;
    }
    if (bin < first_bin_) {
        const std::int64_t more = first_bin_ - bin;
        if (head_ >= more) {
            head_ -= more;
        } else {
            bytes_.insert(bytes_.begin() + head_, static_cast<std::size_t>(more - head_), 0.0);
            head_ = 0;
        }
        first_bin_ = bin;
    }
    const std::int64_t index = head_ + (bin - first_bin_);
    const auto kept = static_cast<std::int64_t>(bytes_.size());
    if (index == kept) {
        bytes_.push_back(0.0);  // the usual case: the next bin (resize() is an out-of-line call)
    } else if (index > kept) {
        bytes_.resize(static_cast<std::size_t>(index + 1), 0.0);
    }
    double& b = bytes_[static_cast<std::size_t>(index)];
    b += bytes;
    max_bytes_ = std::max(max_bytes_, b);
}

void BinnedUsage::add_to_bins(std::int64_t first, std::int64_t end, double bytes) {
    if (!(bytes > 0)) return;
    first = std::max(first, horizon_bin_);  // forgotten history: nothing reads it again
    if (end <= first) return;
    // Make the last and the first bin kept (add_to_new_bin grows the range to each), then add
    // to every bin of the run in place.
    add_to_bin(end - 1, bytes);
    if (end - 1 > first) add_to_bin(first, bytes);
    double* b = bytes_.data() + head_ + (first - first_bin_);
    double top = max_bytes_;
    for (std::int64_t i = 1, n = end - 1 - first; i < n; ++i) {
        b[i] += bytes;
        top = std::max(top, b[i]);
    }
    max_bytes_ = top;
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

void BinnedUsage::forget_before(SimTime t) {
    horizon_bin_ = std::max(horizon_bin_, t / bin_ps_);  // t's own bin is still read
    if (empty() || first_bin_ >= horizon_bin_) return;
    const std::int64_t drop = std::min(horizon_bin_ - first_bin_, size());
    head_ += drop;
    first_bin_ += drop;
    if (head_ > 64 && head_ * 2 > static_cast<std::int64_t>(bytes_.size())) {
        bytes_.erase(bytes_.begin(), bytes_.begin() + head_);
        head_ = 0;
    }
    // The bound follows what is kept, so that a past peak does not make every later booking walk
    // its bins; recomputed now and then (between, it is still a bound, only a looser one): once
    // as many bins have been dropped as are kept, so that it costs O(1) per bin on average (a
    // view's others' usage may reach far ahead: a long remote store into its chip).
    dropped_since_max_ += drop;
    if (dropped_since_max_ < std::max(kRecomputeMaxAfterBins, size())) return;
    dropped_since_max_ = 0;
    max_bytes_ = 0;
    for (std::size_t i = static_cast<std::size_t>(head_); i < bytes_.size(); ++i) max_bytes_ = std::max(max_bytes_, bytes_[i]);
}

void BinnedUsage::clear() {
    bytes_.clear();
    head_ = 0;
    first_bin_ = 0;
    horizon_bin_ = 0;
    max_bytes_ = 0;
    dropped_since_max_ = 0;
}

}  // namespace tandem
