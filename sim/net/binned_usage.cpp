#include "sim/net/binned_usage.hpp"

#include <algorithm>
#include <memory>

namespace tandem {

BinnedUsage::BinnedUsage(SimTime bin_ps) : bin_ps_(bin_ps) {
    if (bin_ps_ <= 0) throw SimError("BinnedUsage: the bin length must be positive");
}

BinnedUsage::~BinnedUsage() {
    for (double* p : pages_) delete[] p;
    for (double* p : spare_) delete[] p;
}

BinnedUsage::BinnedUsage(const BinnedUsage& other) : bin_ps_(other.bin_ps_) { *this = other; }

BinnedUsage& BinnedUsage::operator=(const BinnedUsage& other) {
    if (this == &other) return *this;
    release_all();
    bin_ps_ = other.bin_ps_;
    lo_ = other.lo_;
    hi_ = other.hi_;
    horizon_bin_ = other.horizon_bin_;
    page0_ = other.page0_;
    max_bytes_ = other.max_bytes_;
    dropped_since_max_ = other.dropped_since_max_;
    pages_.assign(other.pages_.size(), nullptr);
    for (std::size_t i = 0; i < other.pages_.size(); ++i) {
        if (other.pages_[i] == nullptr) continue;
        double* page = nullptr;
        if (!spare_.empty()) {
            page = spare_.back();
            spare_.pop_back();
        } else {
            page = new double[kPageBins];
        }
        std::copy(other.pages_[i], other.pages_[i] + kPageBins, page);
        pages_[i] = page;
    }
    return *this;
}

BinnedUsage::BinnedUsage(BinnedUsage&& other) noexcept
    : bin_ps_(other.bin_ps_),
      lo_(other.lo_),
      hi_(other.hi_),
      horizon_bin_(other.horizon_bin_),
      page0_(other.page0_),
      pages_(std::move(other.pages_)),
      spare_(std::move(other.spare_)),
      max_bytes_(other.max_bytes_),
      dropped_since_max_(other.dropped_since_max_) {
    other.pages_.clear();
    other.spare_.clear();
    other.lo_ = other.hi_ = 0;
}

BinnedUsage& BinnedUsage::operator=(BinnedUsage&& other) noexcept {
    if (this == &other) return *this;
    for (double* p : pages_) delete[] p;
    for (double* p : spare_) delete[] p;
    bin_ps_ = other.bin_ps_;
    lo_ = other.lo_;
    hi_ = other.hi_;
    horizon_bin_ = other.horizon_bin_;
    page0_ = other.page0_;
    pages_ = std::move(other.pages_);
    spare_ = std::move(other.spare_);
    max_bytes_ = other.max_bytes_;
    dropped_since_max_ = other.dropped_since_max_;
    other.pages_.clear();
    other.spare_.clear();
    other.lo_ = other.hi_ = 0;
    return *this;
}

double* BinnedUsage::make_page(std::int64_t page) {
    if (pages_.empty()) {
        page0_ = page;
        pages_.push_back(nullptr);
    } else if (page < page0_) {
        pages_.insert(pages_.begin(), static_cast<std::size_t>(page0_ - page), nullptr);
        page0_ = page;
    } else if (page - page0_ >= static_cast<std::int64_t>(pages_.size())) {
        pages_.resize(static_cast<std::size_t>(page - page0_ + 1), nullptr);
    }
    double*& slot = pages_[static_cast<std::size_t>(page - page0_)];
    if (slot == nullptr) {
        if (!spare_.empty()) {
            slot = spare_.back();
            spare_.pop_back();
        } else {
            slot = new double[kPageBins];
        }
        std::fill(slot, slot + kPageBins, 0.0);
    }
    return slot;
}

void BinnedUsage::release(double* page) {
    if (page == nullptr) return;
    if (spare_.size() < kSparePages) {
        spare_.push_back(page);
    } else {
        delete[] page;
    }
}

void BinnedUsage::release_all() {
    for (double*& p : pages_) {
        release(p);
        p = nullptr;
    }
    pages_.clear();
    page0_ = 0;
    lo_ = hi_ = 0;
}

void BinnedUsage::add_to_bins(std::int64_t first, std::int64_t end, double bytes) {
    if (!(bytes > 0)) return;
    first = std::max(first, horizon_bin_);  // forgotten history: nothing reads it again
    if (end <= first) return;
    double top = max_bytes_;
    for (std::int64_t bin = first; bin < end;) {
        double* page = page_for(bin);
        const std::int64_t page_end = std::min(end, ((bin >> kPageShift) + 1) << kPageShift);
        for (std::int64_t i = bin & kPageMask, n = i + (page_end - bin); i < n; ++i) {
            page[i] += bytes;
            top = std::max(top, page[i]);
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
        const std::int64_t p = (bin >> kPageShift) - page0_;
        if (pages_[static_cast<std::size_t>(p)] != nullptr) return bin;
        bin = ((bin >> kPageShift) + 1) << kPageShift;
    }
    return hi_;
}

std::size_t BinnedUsage::pages_held() const {
    return static_cast<std::size_t>(std::count_if(pages_.begin(), pages_.end(), [](const double* p) { return p != nullptr; }));
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
        const std::int64_t keep_from = (horizon_bin_ >> kPageShift) - page0_;
        if (keep_from > 0) {
            for (std::int64_t i = 0; i < keep_from; ++i) release(pages_[static_cast<std::size_t>(i)]);
            pages_.erase(pages_.begin(), pages_.begin() + keep_from);
            page0_ += keep_from;
        }
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
