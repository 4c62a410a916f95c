#include "sim/mem/memory_view.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tandem {

namespace {

// The address range a view spans (rows of a row-major view, columns of a column-major one).
std::int64_t extent_bytes(const GmTensor& g) {
    const std::int64_t es = dtype_bytes(g.dtype());
    const std::int64_t lines = g.layout() == Layout::ND ? g.rows() : g.cols();
    const std::int64_t line = g.layout() == Layout::ND ? g.cols() : g.rows();
    return lines <= 0 || line <= 0 ? 0 : ((lines - 1) * g.ld() + line) * es;
}

// `part` of `whole` of a core's rate cap (a read partly from the L2 and partly through HBM): at
// least 1 byte per second.
std::int64_t share_of(std::int64_t cap, double part, double whole) {
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(cap) * part / whole));
}

}  // namespace

MemoryView::MemoryView(ChipMemory& own, int rank, int source, std::int64_t l2_bytes_per_s, std::int64_t hbm_bytes_per_s)
    : own_(own),
      rank_(rank),
      source_(source),
      l2_(std::make_unique<BinnedCalendar>(fmt::format("rank {} L2", rank), l2_bytes_per_s, kMemCalendarBinPs)),
      hbm_(std::make_unique<BinnedCalendar>(fmt::format("rank {} HBM", rank), hbm_bytes_per_s, kMemCalendarBinPs)) {
    own_.attach(*this);
}

MemoryView::~MemoryView() { own_.detach(*this); }

void MemoryView::begin_kernel() {
    // Only the calendars: the rest is read by the chip when it applies a barrier
    // (ChipMemory::sync), which may run while this is called; the kernel's first booking takes
    // the other producers' usage (catch_up()) and starts fresh calendars.
    anchored_ = false;
}

void MemoryView::anchor_calendars(SimTime origin) {
    // Bins counted from the kernel's first booking: the same kernel started at another instant
    // books the same bins (sim/net/binned_calendar.hpp).
    for (auto* c : {&l2_, &hbm_})
        *c = std::make_unique<BinnedCalendar>((*c)->name(), (*c)->capacity(), kMemCalendarBinPs, origin);
    anchored_ = true;
}

void MemoryView::end_kernel() {
    own_.sync();  // the chip settles against where this view stood at the barrier
    running_ = false;
}

void MemoryView::forget_before(SimTime horizon) {
    for (auto* c : {&l2_, &hbm_}) (*c)->forget_before(horizon);
    others_.forget_before(horizon);
}

void MemoryView::add_others(std::uint64_t end, SimTime t) {
    for (; next_usage_ < end; ++next_usage_) {
        const PublishedUsage& p = own_.usage_at(next_usage_);
        if (p.published_at > t) break;  // published in publication order: the rest later too
        if (p.source == source_) continue;  // already in these calendars
        // Over by t: no booking of this stream from now on reaches it (issue times only grow,
        // and a transfer starts no earlier than its issue).
        if (p.usage.end <= t) continue;
        if (p.usage.per_bin) {
            // Likewise the run's bins that end by t.
            others_.add_run(p.usage, std::max(p.usage.start, t) / kMemUsageBinPs);
        } else {
            others_.add(p.usage);
        }
    }
}

void MemoryView::catch_up(SimTime t) {
    own_.sync();  // what the barriers delivered, before this view reads or moves
    if (!running_) {
        // The kernel's first booking: the past is the chip's settled total (this stream's own
        // usage in it ended with its last kernel), then the records not yet settled.
        others_ = own_.settled();
        next_usage_ = own_.first_index();
        running_ = true;
    }
    add_others(own_.end_index(), t);
}

MemTraffic& MemoryView::traffic_for(int rank) { return traffic_[rank]; }

bool MemoryView::touched_this_window(std::int64_t region) const {
    const auto r = static_cast<std::size_t>(region);
    return r < own_touched_.size() && own_touched_[r] == window_number_;
}

void MemoryView::touch(MemTraffic& traffic, std::int64_t region, bool own) {
    // An own region comes here only when it was not touched in this window (resident_bytes
    // looked); a peer's is recorded once per run of touches.
    if (own) {
        const auto r = static_cast<std::size_t>(region);
        if (r >= own_touched_.size()) own_touched_.resize(r + 1, 0);
        own_touched_[r] = window_number_;
    } else if (!traffic.touched_regions.empty() && traffic.touched_regions.back() == region) {
        return;
    }
    traffic.touched_regions.push_back(region);
}

double MemoryView::resident_bytes(const ChipMemory& chip, const GmTensor& g, double bytes, SimTime t, bool own) {
    const std::int64_t extent = extent_bytes(g);
    if (extent <= 0 || bytes <= 0) return 0;
    const std::int64_t first = g.address();
    const std::int64_t last = first + extent - 1;
    const std::int64_t rb = chip.region_bytes();
    MemTraffic* traffic = nullptr;  // looked up at the first region to record
    double resident = 0;
    for (std::int64_t r = chip.region_of(first), last_region = chip.region_of(last); r <= last_region; ++r) {
        const std::int64_t lo = std::max(first, r * rb);
        const std::int64_t hi = std::min(last + 1, (r + 1) * rb);
        // A region this stream touched in this window is resident (and needs no second touch).
        if (own && touched_this_window(r)) {
            resident += bytes * static_cast<double>(hi - lo) / static_cast<double>(extent);
            continue;
        }
        if (chip.residency().resident_at(r, t)) resident += bytes * static_cast<double>(hi - lo) / static_cast<double>(extent);
        if (traffic == nullptr) traffic = &traffic_for(own ? rank_ : g.rank());
        touch(*traffic, r, own);
    }
    return resident;
}

SimTime MemoryView::book_local(const GmTensor& g, MemAccess access, SimTime issue, SimTime start, double bytes,
                               std::int64_t cap) {
    catch_up(issue);
    if (!anchored_) anchor_calendars(start);
    SimTime end = start;
    double hbm_bytes = 0;
    if (access == MemAccess::Read) {
        const double hit = resident_bytes(own_, g, bytes, issue, true);
        const double miss = bytes - hit;
        l2_hit_bytes_ += hit;
        hbm_read_bytes_ += miss;
        hbm_bytes = miss;
        const UsageSum l2_others = others_l2();
        const UsageSum hbm_others = others_hbm();
        BinnedCalendar* from_l2[] = {l2_.get()};
        const UsageSum* l2_bg[] = {&l2_others};
        BinnedCalendar* from_hbm[] = {l2_.get(), hbm_.get()};
        const UsageSum* hbm_bg[] = {&l2_others, &hbm_others};
        if (miss <= 0) {
            end = book_binned(from_l2, start, bytes, cap, l2_bg);
        } else if (hit <= 0) {
            end = book_binned(from_hbm, start, bytes, cap, hbm_bg);
        } else {
            // The resident part from the L2 alone, the rest through HBM, each at its share of
            // the core's rate, so that uncontended they end together.
            end = std::max(book_binned(from_l2, start, hit, share_of(cap, hit, bytes), l2_bg),
                           book_binned(from_hbm, start, miss, share_of(cap, miss, bytes), hbm_bg));
        }
    } else {
        // Written into the L2 (a region written is resident); an atomic add reads and writes it
        // there. The write-back to HBM follows on its own: it takes HBM bandwidth, not the store's.
        resident_bytes(own_, g, bytes, issue, true);
        const int passes = access == MemAccess::AtomicAdd ? 2 : 1;
        const UsageSum l2_others = others_l2();
        BinnedCalendar* path[] = {l2_.get()};
        const UsageSum* bg[] = {&l2_others};
        end = book_binned(path, start, passes * bytes, passes * cap, bg);
        hbm_bytes = bytes;
        others_.hbm.add(start, end, bytes);  // beside the calendars: it does not hold this store up
    }
    const double l2_bytes = access == MemAccess::AtomicAdd ? 2 * bytes : bytes;
    if (end > start) publish(rank_, MemUsage{start, end, l2_bytes, hbm_bytes});
    return end;
}

void MemoryView::note_remote(ChipMemory& peer, const GmTensor& g, MemAccess access, SimTime issue, SimTime start,
                             SimTime end, double bytes) {
    if (end <= start || bytes <= 0) return;
    peer.sync();
    const double resident = resident_bytes(peer, g, bytes, issue, false);
    MemUsage u{start, end, access == MemAccess::AtomicAdd ? 2 * bytes : bytes,
               access == MemAccess::Read ? bytes - resident : bytes};
    publish(g.rank(), u);
}

UsageSum MemoryView::others_l2() const { return UsageSum(kMemUsageRateStep).plus(&others_.l2); }

UsageSum MemoryView::others_hbm() const { return UsageSum(kMemUsageRateStep).plus(&others_.hbm); }

void MemoryView::publish(int rank, const MemUsage& u) {
    if (rank == rank_) {
        own_bins_.add(u);
        own_published_ = true;
        return;
    }
    UsageBins& bins = peer_bins_[rank];
    if (bins.l2.empty() && bins.hbm.empty()) peers_published_.push_back(rank);
    bins.add(u);
}

std::map<int, MemTraffic> MemoryView::take_traffic() {
    if (++window_number_ == 0) {  // wrapped after 2^32 windows: no stale number may match
        std::fill(own_touched_.begin(), own_touched_.end(), 0);
        window_number_ = 1;
    }
    // One record per run of equal bins with bytes.
    const auto emit = [](UsageBins& bins, std::vector<MemUsage>& out) {
        if (bins.l2.empty() && bins.hbm.empty()) return;
        const std::int64_t first = bins.l2.empty()    ? bins.hbm.first_bin()
                                   : bins.hbm.empty() ? bins.l2.first_bin()
                                                      : std::min(bins.l2.first_bin(), bins.hbm.first_bin());
        const std::int64_t end = std::max(bins.l2.end_bin(), bins.hbm.end_bin());
        for (std::int64_t b = first; b < end; ++b) {
            const double l2 = bins.l2.bytes_in(b);
            const double hbm = bins.hbm.bytes_in(b);
            if (!(l2 > 0 || hbm > 0)) continue;
            MemUsage* last = out.empty() ? nullptr : &out.back();
            if (last != nullptr && last->per_bin && last->end == b * kMemUsageBinPs && last->l2_bytes == l2 &&
                last->hbm_bytes == hbm) {
                last->end += kMemUsageBinPs;
            } else {
                out.push_back(MemUsage{b * kMemUsageBinPs, (b + 1) * kMemUsageBinPs, l2, hbm, true});
            }
        }
        bins.clear();
    };
    if (own_published_) emit(own_bins_, traffic_[rank_].usage);
    own_published_ = false;
    for (int rank : peers_published_) emit(peer_bins_[rank], traffic_[rank].usage);
    peers_published_.clear();
    std::map<int, MemTraffic> out;
    out.swap(traffic_);
    return out;
}

}  // namespace tandem
