#pragma once
// Bins of simulated time, one double each, kept in pages of kPageBins made only where bytes
// land: bookings made far ahead (a block's scalar issues long before its pipes run) and
// scattered (a comm block storing into 63 peers in turn) cost the pages they touch, not the
// whole span between them. The one page store of every binned record of usage: a stream's own
// calendars (sim/net/binned_calendar.hpp) and the usage others booked (sim/share/binned_usage.hpp).
//
// Pages are numbered bin >> kPageShift, whatever the bins' origin, so that stores of one bin
// length have their page edges at the same bins. A page is zeroed when it is made; emptied pages
// are kept for reuse, up to a number the owner chooses.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem {

class BinPages {
public:
    static constexpr int kPageShift = 6;
    static constexpr std::int64_t kPageBins = std::int64_t{1} << kPageShift;
    static constexpr std::int64_t kPageMask = kPageBins - 1;
    // The first bin after `bin`'s page.
    static std::int64_t page_end_bin(std::int64_t bin) { return ((bin >> kPageShift) + 1) << kPageShift; }

    // `spare_pages`: how many emptied pages are kept for reuse at most.
    explicit BinPages(std::size_t spare_pages) : spare_max_(spare_pages) {}
    ~BinPages();
    BinPages(const BinPages& other);
    BinPages& operator=(const BinPages& other);
    BinPages(BinPages&& other) noexcept;
    BinPages& operator=(BinPages&& other) noexcept;

    // The bytes in bin `bin` (0 where no page holds it).
    double at(std::int64_t bin) const {
        const std::int64_t p = (bin >> kPageShift) - page0_;
        if (p < 0 || p >= static_cast<std::int64_t>(pages_.size())) return 0.0;
        const double* page = pages_[static_cast<std::size_t>(p)];
        return page != nullptr ? page[bin & kPageMask] : 0.0;
    }
    // Whether a page holds bin `bin`.
    bool held(std::int64_t bin) const {
        const std::int64_t p = (bin >> kPageShift) - page0_;
        return p >= 0 && p < static_cast<std::int64_t>(pages_.size()) && pages_[static_cast<std::size_t>(p)] != nullptr;
    }
    // Bin `bin`'s slot in its page (made, zeroed, if need be): the bins up to page_end_bin(bin)
    // follow it.
    double* slot(std::int64_t bin) {
        const std::int64_t p = (bin >> kPageShift) - page0_;
        if (p >= 0 && p < static_cast<std::int64_t>(pages_.size())) {
            double* page = pages_[static_cast<std::size_t>(p)];
            if (page != nullptr) return page + (bin & kPageMask);
        }
        return make_page(bin >> kPageShift) + (bin & kPageMask);
    }
    // Releases the pages wholly before `bin`'s page.
    void drop_pages_before(std::int64_t bin);
    // Releases every page.
    void clear();
    std::size_t pages_held() const { return held_; }

private:
    double* make_page(std::int64_t page);
    void release(double* page);
    double* fresh_page();

    std::size_t spare_max_;
    // pages_[i] holds the bins of page page0_ + i (null: none there).
    std::vector<double*> pages_;
    std::int64_t page0_ = 0;
    std::size_t held_ = 0;
    std::vector<double*> spare_;  // emptied pages, for reuse
};

}  // namespace tandem
