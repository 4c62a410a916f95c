#pragma once
// The memory system of one chip as every consumer shares it: an L2 of `l2_bytes` in front of
// HBM. Every stream of the chip (the cube's panel loads and FIX stores, the vector cores' UB
// traffic), every peer writing into the chip's window and every atomic add landing in it uses
// the same L2 bandwidth; what misses the L2 (and every write, when it is written back) also
// uses HBM bandwidth.
//
// The streams of a chip are separate logical processes, simulated in parallel between window
// barriers (sim/exec/coordinator.hpp). So that what one stream does to another stays a pure
// function of simulated time, their shared state is exchanged the way signals are: as records
// stamped with the end of the window that produced them (`published_at`), delivered at the
// barrier in the coordinator's total order, and used by a stream only from that time on. Each
// stream books its transfers on calendars of its own (MemoryView, sim/mem/memory_view.hpp) and
// reads the other producers' usage beside them. The price is a lag of at most one window (the
// coordinator's lookahead, under a microsecond): bookings two streams make in the same window do
// not see each other, so for that long the chip can be oversubscribed.
//
// Usage is kept in bins of kMemUsageBinPs. Each stream keeps the other producers' usage in bins
// of its own, beside its calendars: it adds the records its clock has reached, in its windows.
// At each barrier's horizon the chip moves the records every running stream has looked at into
// a total, from which a stream that starts a kernel takes the past: its own usage in it is over
// by then (a stream runs one kernel at a time), so all of the total that is still to come is the
// others'.
//
// L2 residency is kept per region of `region_bytes` (not per cache line, so that it stays
// cheap), least recently used first out, from the regions every producer touched, applied in
// delivery order. Each region keeps the intervals of publication time during which
// it was resident, so a stream asks "was this region in L2 at time t" and gets the same answer
// whichever barrier the host has reached. Within a resident region, residency is kept per cell
// of a grid of kRegionSlices slices of its bytes by kRegionBands bands of its rows (RegionPart): a
// tile that reads a column band of a matrix wider than itself (a weight panel of a wide B) brings
// that band of its rows into the L2, not the other tiles' columns that share the region's rows,
// nor the rows of the next panel that share the region.
//
// The barrier itself only queues (deliver, forget_before): it is the one part of a window that
// runs on one host thread while the others wait, and a chip's share of it grows with its peers.
// The first stream that reads the chip in the next window applies the queue (sync(), a
// FirstReaderWork: sim/share/first_reader_work.hpp), exactly as the barrier would have: no stream
// of the chip has read or moved since the barrier, so what it applies, and the views' positions
// it settles against, are those of the barrier, whichever host thread gets there first. Every
// reader calls sync() first.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/share/binned_usage.hpp"
#include "sim/share/first_reader_work.hpp"
#include "sim/share/sharing_quanta.hpp"
#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class MemoryView;

// Usage is published and kept in bins of kMemUsageBinPs, a stream's own bookings in bins of
// kMemCalendarBinPs, rates read in steps of kMemUsageRateStep (sim/share/sharing_quanta.hpp, beside
// the links').

// Bytes one producer moved through a chip's memory over [start, end), spread evenly; or, with
// `per_bin`, a run of whole bins of kMemUsageBinPs that each hold the bytes given (what a view
// publishes: a long remote store is hundreds of equal bins, sent and added as one record).
struct MemUsage {
    SimTime start = 0;
    SimTime end = 0;
    double l2_bytes = 0;   // through the L2 (an atomic add counts its read and its write)
    double hbm_bytes = 0;  // to or from HBM (misses, write-backs)
    bool per_bin = false;
};

// The part of a region a read covers, on a grid of cells: kRegionSlices slices of the region's
// bytes (by offset in the region) by kRegionBands bands (by where the bytes lie within a row of
// the tensor read: address mod the row pitch, in equal parts of the pitch). A read of whole rows
// covers every band; a read of a column band of a wider matrix the bands its columns fall in. Each
// slice and band goes to the read that covers most of it (boundaries rounded to the nearest), so
// that tiles side by side, or one above the other across a region's edge, name cells of their
// own. One bit per band, a mask per slice.
inline constexpr int kRegionBands = 64;
inline constexpr int kRegionSlices = 8;
using BandMask = std::uint64_t;
inline constexpr BandMask kAllBands = ~BandMask{0};
static_assert(kRegionBands == 64, "BandMask holds one bit per band");
using RegionCells = std::array<BandMask, kRegionSlices>;  // per slice, its bands


struct RegionPart {
    BandMask bands = kAllBands;
    std::uint8_t slice_first = 0;
    std::uint8_t slice_end = kRegionSlices;
    // How many of the part's cells `cells` (or `more`, if given) holds; `band_count` is
    // popcount(bands), worked out once per read (a slice with all of them or none needs no count).
    int count_in(const RegionCells& cells, int band_count, const RegionCells* more = nullptr) const {
        int n = 0;
        for (int s = slice_first; s < slice_end; ++s) {
            BandMask m = cells[static_cast<std::size_t>(s)];
            if (more != nullptr) m |= (*more)[static_cast<std::size_t>(s)];
            m &= bands;
            n += m == bands ? band_count : (m == 0 ? 0 : std::popcount(m));
        }
        return n;
    }
    int count_in(const RegionCells& cells) const { return count_in(cells, std::popcount(bands)); }
    int cell_count() const { return std::popcount(bands) * (slice_end - slice_first); }
    // Adds the part to `cells`; returns whether they now hold every cell.
    bool add_to(RegionCells& cells) const {
        bool all = true;
        for (int s = slice_first; s < slice_end; ++s) {
            BandMask& c = cells[static_cast<std::size_t>(s)];
            c |= bands;
            all = all && c == kAllBands;
        }
        if (!all) return false;
        for (int s = 0; s < kRegionSlices; ++s) {  // its own slices are full: the others too?
            if (cells[static_cast<std::size_t>(s)] != kAllBands) return false;
        }
        return true;
    }
};

inline RegionCells all_cells() {
    RegionCells c;
    c.fill(kAllBands);
    return c;
}

// A region's cells as a reader sees them: `whole` when it holds every cell (no need to count).
struct CellsView {
    const RegionCells* cells = nullptr;
    bool whole = false;
};

// A part of a region touched, as a window hands it in: 16 bytes, the region's number in 32 bits
// (a burst's window hands in hundreds of thousands of these).
class RegionTouch {
public:
    // Throws SimError for a region number outside 0..2^32-1 (past 8 PiB of 2 MiB regions).
    RegionTouch(std::int64_t region, const RegionPart& part = RegionPart{})
        : bands_(part.bands), region_(checked_region(region)), slice_first_(part.slice_first), slice_end_(part.slice_end) {}

    std::int64_t region() const { return region_; }
    RegionPart part() const { return RegionPart{bands_, slice_first_, slice_end_}; }
    // Widens the part to cover `p` too: the bands of both, the slices from the first to the last.
    void join(const RegionPart& p) {
        bands_ |= p.bands;
        slice_first_ = std::min(slice_first_, p.slice_first);
        slice_end_ = std::max(slice_end_, p.slice_end);
    }

private:
    static std::uint32_t checked_region(std::int64_t region) {
        if (region < 0 || region > std::int64_t{0xffffffff})
            throw SimError("L2 residency: region number " + std::to_string(region) + " out of range");
        return static_cast<std::uint32_t>(region);
    }
    BandMask bands_;
    std::uint32_t region_;
    std::uint8_t slice_first_;
    std::uint8_t slice_end_;
};
static_assert(sizeof(RegionTouch) == 16, "a touch is handed in by the hundred thousand");

// What one producer (a stream, for its own chip or a peer's) did to one chip's memory in one
// window. Carried by a Message of kind MemTraffic, delivered at the window's barrier.
struct MemTraffic {
    std::vector<MemUsage> usage;
    std::vector<RegionTouch> touched_regions;  // in the order they were first touched
};

// Usage through the L2 and through HBM, in bins.
struct UsageBins {
    BinnedUsage l2{kMemUsageBinPs};
    BinnedUsage hbm{kMemUsageBinPs};
    void add(const MemUsage& u) {
        if (u.per_bin) {
            add_run(u, u.start / kMemUsageBinPs);
            return;
        }
        if (u.end <= u.start) return;
        // The bins worked out once for both stores, dividing by a constant.
        const std::int64_t first = u.start / kMemUsageBinPs;
        const std::int64_t last = (u.end - 1) / kMemUsageBinPs;
        l2.add_over(u.start, u.end, first, last, u.l2_bytes);
        hbm.add_over(u.start, u.end, first, last, u.hbm_bytes);
    }
    // The bins of a per-bin run from bin `first` on (each as the one-bin record it stands for).
    void add_run(const MemUsage& u, std::int64_t first) {
        const std::int64_t end = u.end / kMemUsageBinPs;
        l2.add_to_bins(first, end, u.l2_bytes);
        hbm.add_to_bins(first, end, u.hbm_bytes);
    }
    void forget_before(SimTime t) {
        l2.forget_before(t);
        hbm.forget_before(t);
    }
    void clear() {
        l2.clear();
        hbm.clear();
    }
};

class L2Residency {
public:
    // `capacity_regions`: how many regions the L2 holds (l2_bytes / region_bytes).
    explicit L2Residency(std::int64_t capacity_regions);

    // At a barrier: `part` of `region` was touched by traffic published at `at` (non-decreasing).
    void touch(std::int64_t region, const RegionPart& part, SimTime at);
    void touch(std::int64_t region, SimTime at) { touch(region, RegionPart{}, at); }
    // During a window (read-only): the cells of `region` resident at publication time t. (Cells
    // are kept for the open interval only, as they are now: a cell added after t counts from the
    // region's entry, and in an interval that has closed all of the region counts. Both differ
    // only for a time before the barrier that applied the touch, which a read rarely asks for.)
    CellsView resident_cells(std::int64_t region, SimTime t) const;
    // Was all of `region` resident at t?
    bool resident_at(std::int64_t region, SimTime t) const { return resident_cells(region, t).whole; }
    // At a barrier: residency before `horizon` will not be asked again.
    void forget_before(SimTime horizon);
    std::int64_t resident_count() const { return resident_; }

private:
    struct Region {
        // [in, out) intervals of residency, oldest first; the last one may be open (out == kNever).
        std::vector<std::pair<SimTime, SimTime>> intervals;
        SimTime resident_since = kNever;  // the open interval's start (kNever: not resident now)
        std::int64_t prev = -1;  // LRU neighbours (region ids), while resident
        std::int64_t next = -1;
        // In the open interval: the cells brought in (whole: all of them).
        RegionCells cells{};
        bool whole = false;
        bool touched = false;  // ever (its intervals may all have been dropped)
    };
    // The region's entry (made on first use: region ids are GM addresses / region_bytes, dense
    // from the first allocation on, so a vector indexed by id; a lookup is on every load).
    Region& region(std::int64_t id);
    void unlink(std::int64_t id, Region& r);
    void push_front(std::int64_t id, Region& r);

    std::int64_t capacity_;
    std::int64_t resident_ = 0;
    std::int64_t closed_intervals_ = 0;  // since the last pruning
    std::int64_t regions_touched_ = 0;   // regions with an entry that was ever touched
    std::int64_t head_ = -1;  // most recently used
    std::int64_t tail_ = -1;  // least recently used
    std::vector<Region> regions_;  // indexed by region id
};

class ChipMemory {
public:
    ChipMemory(std::int64_t l2_bytes, std::int64_t region_bytes);

    std::int64_t region_bytes() const { return region_bytes_; }
    // (A shift when the regions are a power of two bytes, as every profile's are: this is on
    // every GM access. Addresses are not negative, so the shift is the division.)
    std::int64_t region_of(std::int64_t address) const {
        return region_shift_ >= 0 ? address >> region_shift_ : address / region_bytes_;
    }
    // The slice boundary (0..kRegionSlices) nearest to `offset` bytes into a region (a shift too).
    std::int64_t nearest_slice_boundary(std::int64_t offset) const {
        const std::int64_t x = offset * kRegionSlices + region_bytes_ / 2;
        return region_shift_ >= 0 ? x >> region_shift_ : x / region_bytes_;
    }

    // ---- at barriers (single-threaded): queued, applied by the next sync() ----
    // A producer's traffic of one window, published at `at` (the end of that window).
    void deliver(std::shared_ptr<const MemTraffic> traffic, SimTime at, int source);
    // Every stream's clock has reached `horizon`: the records every running view has looked at
    // are settled into the total, and usage and residency history before `horizon` is forgotten
    // (every booking still to come starts at or after it).
    void forget_before(SimTime horizon);

    // ---- during windows, before any read below (any thread) ----
    // Applies what the barriers queued since the last sync: the deliveries in order, then the
    // latest horizon (settling at each horizon in turn, or once at the last, gives the same
    // total: the records settle in the same order, and no view moved in between).
    void sync();

    // ---- at any time (under a lock of its own) ----
    // A stream's view of this chip, from its construction to its end.
    void attach(MemoryView& view);
    void detach(MemoryView& view);

    // ---- during windows (read-only) ----
    const L2Residency& residency() const { return residency_; }
    // The usage published and not yet settled, in publication order, numbered from first_index()
    // on.
    std::uint64_t first_index() const { return first_index_; }
    std::uint64_t end_index() const { return first_index_ + recent_.size(); }
    // Calls f(usage, published_at, source) for the records numbered [from, end) (from at least
    // first_index(), end at most end_index()) in order until f returns false; returns the number
    // of the first record f did not take (`end` if it took them all).
    template <typename F>
    std::uint64_t visit_unsettled(std::uint64_t from, std::uint64_t end, F&& f) const {
        if (from >= end) return from;
        // The publication holding record `from`: the last that begins at or before it.
        auto p = std::prev(std::upper_bound(publications_.begin(), publications_.end(), from,
                                            [](std::uint64_t i, const Publication& q) { return i < q.begin; }));
        std::uint64_t i = from;
        while (i < end) {
            const auto next = std::next(p);
            const std::uint64_t stop = std::min(end, next == publications_.end() ? end_index() : next->begin);
            for (; i < stop; ++i) {
                if (!f(recent_[i - first_index_], p->published_at, p->source)) return i;
            }
            p = next;
        }
        return i;
    }
    // The settled usage, every producer's (for a view that starts a kernel).
    const UsageBins& settled() const { return settled_; }

private:
    struct Delivery {
        std::shared_ptr<const MemTraffic> traffic;
        SimTime at = 0;
        int source = 0;
    };
    void apply(const Delivery& d);
    void settle_and_forget(SimTime horizon);

    std::int64_t region_bytes_;
    int region_shift_ = -1;  // log2(region_bytes_) when that is a power of two, else -1
    // Queued by the barriers since the last sync, which applies them (pending from the barrier
    // that queued to the sync).
    std::vector<Delivery> queued_;
    SimTime queued_horizon_ = -1;  // -1: none
    FirstReaderWork queue_to_apply_;
    L2Residency residency_;
    // The records not yet settled, as delivered, and per delivery where its records begin, when
    // they were published and by whom (kept once per delivery, not per record: a chip holds a
    // burst's records until every running view has looked at them).
    struct Publication {
        std::uint64_t begin = 0;  // the number of its first record
        SimTime published_at = 0;  // usable by another stream from this simulated time on
        int source = 0;            // producer id (LogicalProcess::source_id)
    };
    std::deque<MemUsage> recent_;
    std::deque<Publication> publications_;  // in delivery order; the first may be partly settled
    std::uint64_t first_index_ = 0;
    std::uint64_t published_end_ = 0;  // the records before it were published by the last horizon
    UsageBins settled_;
    std::int64_t forgotten_bin_ = 0;  // the total's bins before this one are forgotten
    std::mutex views_mu_;             // views attach and detach from the host's threads
    std::vector<MemoryView*> views_;
};

}  // namespace tandem
