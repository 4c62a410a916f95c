#include "sim/share/bin_pages.hpp"

#include <algorithm>

namespace tandem {

BinPages::~BinPages() {
    for (double* p : pages_) delete[] p;
    for (double* p : spare_) delete[] p;
}

BinPages::BinPages(const BinPages& other) : spare_max_(other.spare_max_) { *this = other; }

BinPages& BinPages::operator=(const BinPages& other) {
    if (this == &other) return *this;
    clear();
    spare_max_ = other.spare_max_;
    page0_ = other.page0_;
    pages_.assign(other.pages_.size(), nullptr);
    for (std::size_t i = 0; i < other.pages_.size(); ++i) {
        if (other.pages_[i] == nullptr) continue;
        double* page = fresh_page();
        std::copy(other.pages_[i], other.pages_[i] + kPageBins, page);
        pages_[i] = page;
        ++held_;
    }
    return *this;
}

BinPages::BinPages(BinPages&& other) noexcept
    : spare_max_(other.spare_max_),
      pages_(std::move(other.pages_)),
      page0_(other.page0_),
      held_(other.held_),
      spare_(std::move(other.spare_)) {
    other.pages_.clear();
    other.spare_.clear();
    other.page0_ = 0;
    other.held_ = 0;
}

BinPages& BinPages::operator=(BinPages&& other) noexcept {
    if (this == &other) return *this;
    for (double* p : pages_) delete[] p;
    for (double* p : spare_) delete[] p;
    spare_max_ = other.spare_max_;
    pages_ = std::move(other.pages_);
    page0_ = other.page0_;
    held_ = other.held_;
    spare_ = std::move(other.spare_);
    other.pages_.clear();
    other.spare_.clear();
    other.page0_ = 0;
    other.held_ = 0;
    return *this;
}

double* BinPages::fresh_page() {
    if (spare_.empty()) return new double[kPageBins];
    double* page = spare_.back();
    spare_.pop_back();
    return page;
}

double* BinPages::make_page(std::int64_t page) {
    // Bins come in any order of time: one may land before the pages held.
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
        slot = fresh_page();
        std::fill(slot, slot + kPageBins, 0.0);
        ++held_;
    }
    return slot;
}

void BinPages::release(double* page) {
    if (page == nullptr) return;
    --held_;
    if (spare_.size() < spare_max_) {
        spare_.push_back(page);
    } else {
        delete[] page;
    }
}

void BinPages::drop_pages_before(std::int64_t bin) {
    const std::int64_t drop = std::min((bin >> kPageShift) - page0_, static_cast<std::int64_t>(pages_.size()));
    if (drop <= 0) return;
    for (std::int64_t i = 0; i < drop; ++i) release(pages_[static_cast<std::size_t>(i)]);
    pages_.erase(pages_.begin(), pages_.begin() + drop);
    page0_ += drop;
}

void BinPages::clear() {
    for (double* p : pages_) release(p);
    pages_.clear();
    page0_ = 0;
}

}  // namespace tandem
