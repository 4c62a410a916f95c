#include "sim/mem/memory_view.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "sim/burst_room.hpp"
#include "sim/mem/usage_runs.hpp"

namespace tandem {

namespace {

// The address range a view spans (rows of a row-major view, columns of a column-major one).
std::int64_t extent_bytes(const GmTensor& g) {
    const std::int64_t es = dtype_bytes(g.dtype());
    const std::int64_t lines = g.layout() == Layout::ND ? g.rows() : g.cols();
    const std::int64_t line = g.layout() == Layout::ND ? g.cols() : g.rows();
    return lines <= 0 || line <= 0 ? 0 : ((lines - 1) * g.ld() + line) * es;
}

// The bands (sim/mem/chip_memory.hpp) a read of `g` covers in each region it spans, and how many
// (one run of bands, so its length: no population count). Whole rows cover every band. Lines
// narrower than the row pitch (a column band of a wider matrix) cover the bands their bytes fall
// in within a row, by address mod the pitch, so that every view of one tensor names the same
// bands for the same columns; each band goes to the read that covers most of it, so tiles side
// by side in a row name bands side by side, none twice, however the tensor's start is aligned.
struct Bands {
    BandMask mask = kAllBands;
    int count = kRegionBands;
};
Bands bands_of(const GmTensor& g) {
    const std::int64_t es = dtype_bytes(g.dtype());
    const std::int64_t line = (g.layout() == Layout::ND ? g.cols() : g.rows()) * es;
    const std::int64_t pitch = g.ld() * es;
    if (line <= 0 || line >= pitch) return Bands{};
    const std::int64_t off = g.address() % pitch;
    // Band boundaries rounded to the nearest: [first, end) in units of pitch / kRegionBands.
    const std::int64_t first = (off * kRegionBands + pitch / 2) / pitch;
    const std::int64_t end = std::max(first + 1, ((off + line) * kRegionBands + pitch / 2) / pitch);
    const int count = static_cast<int>(end - first);
    if (count >= kRegionBands) return Bands{};
    // `count` bands from `first` on; past the row's end they wrap to its start.
    return Bands{std::rotl((BandMask{1} << count) - 1, static_cast<int>(first % kRegionBands)), count};
}

// The cells (sim/mem/chip_memory.hpp) of a region that bytes [lo, hi) of it, in `bands`, cover:
// the slices rounded to the nearest boundary, at least one.
RegionPart part_of(const ChipMemory& chip, BandMask bands, std::int64_t lo, std::int64_t hi) {
    const std::int64_t first = std::min<std::int64_t>(kRegionSlices - 1, chip.nearest_slice_boundary(lo));
    const std::int64_t end = std::max(first + 1, chip.nearest_slice_boundary(hi));
    return RegionPart{bands, static_cast<std::uint8_t>(first), static_cast<std::uint8_t>(std::min<std::int64_t>(end, kRegionSlices))};
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
    l2_->restart(origin);
    hbm_->restart(origin);
    anchored_ = true;
}

void MemoryView::end_kernel() {
    own_.sync();  // the chip settles against where this view stood at the barrier
    running_ = false;
    // Until this stream's next kernel its records are not needed: an op's views run their
    // kernels on different streams, and each stream's idle pool held its peak's records.
    pool_->release_kept();
}

void MemoryView::forget_before(SimTime horizon) {
    for (auto* c : {&l2_, &hbm_}) (*c)->forget_before(horizon);
    others_.forget_before(horizon);
}

void MemoryView::add_others(std::uint64_t end, SimTime t) {
    next_usage_ = own_.visit_unsettled(next_usage_, end, [&](const MemUsage& u, SimTime published_at, int source) {
        if (published_at > t) return false;  // published in publication order: the rest later too
        if (source == source_) return true;  // already in these calendars
        // Over by t: no booking of this stream from now on reaches it (issue times only grow,
        // and a transfer starts no earlier than its issue).
        if (u.end <= t) return true;
        if (u.per_bin) {
            // Likewise the run's bins that end by t.
            others_.add_run(u, std::max(u.start, t) / kMemUsageBinPs);
        } else {
            others_.add(u);
        }
        return true;
    });
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

MemTraffic& MemoryView::traffic_for(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (r >= traffic_.size()) traffic_.resize(r + 1);
    if (!traffic_[r]) {
        traffic_[r] = pool_->take();
        traffic_ranks_.push_back(rank);
    }
    return *traffic_[r];
}

void MemoryView::touch(MemTraffic& traffic, std::int64_t region, const RegionPart& part, bool own, bool resident) {
    // An own region comes here only when some of these cells were not touched in this window
    // (resident_bytes looked). It is recorded for the chip the first time in the window (the
    // L2's order of use) and whenever it brings cells in that were not resident; otherwise it
    // only joins the window's cells. A peer's is recorded once per run of touches of one region
    // (their union: the bands of both, the slices from the first to the last).
    if (own) {
        const auto r = static_cast<std::size_t>(region);
        if (r >= own_touched_.size()) own_touched_.resize(r + 1);
        WindowTouch& w = own_touched_[r];
        const bool first_in_window = w.window != window_number_;
        if (first_in_window) w = WindowTouch{window_number_, false, RegionCells{}};
        if (!w.whole) w.whole = part.add_to(w.cells);
        if (!first_in_window && resident) return;
    } else if (!traffic.touched_regions.empty() && traffic.touched_regions.back().region() == region) {
        traffic.touched_regions.back().join(part);
        return;
    }
    traffic.touched_regions.push_back(RegionTouch{region, part});
}

// Counting a read's resident cells is a popcount per slice, 10 M reads in a 64-rank comm kernel:
// on an x86-64 host with the instruction, a clone of this function uses it (chosen once, at load;
// the counts are the same either way). Sanitizer builds keep the one plain function.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("popcnt", "default")))
#endif
double MemoryView::resident_bytes(const ChipMemory& chip, const GmTensor& g, double bytes, SimTime t, bool own) {
    const std::int64_t extent = extent_bytes(g);
    if (extent <= 0 || bytes <= 0) return 0;
    const std::int64_t first = g.address();
    const std::int64_t last = first + extent - 1;
    const std::int64_t rb = chip.region_bytes();
    const auto [bands, band_count] = bands_of(g);
    MemTraffic* traffic = nullptr;  // looked up at the first region to record
    double resident = 0;
    for (std::int64_t r = chip.region_of(first), last_region = chip.region_of(last); r <= last_region; ++r) {
        const std::int64_t lo = std::max(first, r * rb);
        const std::int64_t hi = std::min(last + 1, (r + 1) * rb);
        const double in_region = bytes * static_cast<double>(hi - lo) / static_cast<double>(extent);
        const RegionPart part = part_of(chip, bands, lo - r * rb, hi - r * rb);
        const int cells = band_count * (part.slice_end - part.slice_first);
        // Cells this stream touched in this window are resident (and need no second touch).
        const CellsView mine = own ? touched_this_window(r) : CellsView{};
        int in = mine.whole ? cells : (mine.cells != nullptr ? part.count_in(*mine.cells, band_count) : 0);
        if (in < cells) {
            const CellsView now = chip.residency().resident_cells(r, t);
            in = now.whole ? cells : part.count_in(*now.cells, band_count, mine.cells);
            if (traffic == nullptr) traffic = &traffic_for(own ? rank_ : g.rank());
            touch(*traffic, r, part, own, in == cells);
        }
        if (in == cells) resident += in_region;
        else if (in > 0) resident += in_region * in / cells;
    }
    return resident;
}

SimTime MemoryView::book_local(const GmTensor& g, MemAccess access, SimTime issue, SimTime start, double bytes,
                               std::int64_t cap, const ReadRequests& requests) {
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
        // The core's requests in flight bound the read by their mean latency (read_requests.hpp),
        // and a read that misses takes at least one miss's latency beyond the hit's (in `start`).
        SimTime first_miss_back = start;
        if (requests.bounded() && bytes > 0) {
            cap = std::min(cap, requests.rate_bps(miss / bytes));
            if (miss > 0) first_miss_back = start + requests.miss_ps;
        }
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
        end = std::max(end, first_miss_back);
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
    // A peer's usages wait in its record as they were made, turned into runs at the window's end.
    std::vector<MemUsage>& usage = traffic_for(rank).usage;
    if (usage.empty()) peers_published_.push_back(rank);
    usage.push_back(u);
}

void MemoryView::take_traffic(std::vector<ChipTraffic>& out) {
    if (++window_number_ == 0) {  // wrapped after 2^32 windows: no stale number may match
        std::fill(own_touched_.begin(), own_touched_.end(), WindowTouch{});
        window_number_ = 1;
    }
    // One record per run of equal bins with bytes (sim/mem/usage_runs.hpp).
    if (own_published_ && !(own_bins_.l2.empty() && own_bins_.hbm.empty())) {
        append_bin_runs(own_bins_, traffic_for(rank_).usage);
    }
    own_published_ = false;
    for (int rank : peers_published_) {
        const auto r = static_cast<std::size_t>(rank);
        usages_to_runs(traffic_[r]->usage, runs_scratch_);
    }
    peers_published_.clear();
    out.clear();
    std::sort(traffic_ranks_.begin(), traffic_ranks_.end());
    for (int rank : traffic_ranks_) {
        std::shared_ptr<MemTraffic>& t = traffic_[static_cast<std::size_t>(rank)];
        // Sent without the room a burst left (the stores a kernel's first window made into a
        // peer, replaced by fewer runs): a chip holds what it was sent until a stream reads it.
        release_burst_room(t->usage);
        release_burst_room(t->touched_regions);
        out.push_back(ChipTraffic{rank, std::move(t)});
    }
    traffic_ranks_.clear();
}

}  // namespace tandem
