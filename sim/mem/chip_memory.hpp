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
// stream books its transfers on calendars of its own (MemoryView, sim/mem/memory_view.hpp) to
// which it adds the other producers' usage when its own clock reaches their publication time.
// The price is a lag of at most one window (the coordinator's lookahead, under a microsecond):
// bookings two streams make in the same window do not see each other, so for that long the
// chip can be oversubscribed.
//
// L2 residency is kept per region of `region_bytes` (not per cache line, so that it stays
// cheap), least recently used first out, from the regions every producer touched, applied at
// barriers in delivery order. Each region keeps the intervals of publication time during which
// it was resident, so a stream asks "was this region in L2 at time t" and gets the same answer
// whichever barrier the host has reached.
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/sim_time.hpp"

namespace tandem {

// Bytes one producer moved through a chip's memory over [start, end), spread evenly.
struct MemUsage {
    SimTime start = 0;
    SimTime end = 0;
    double l2_bytes = 0;   // through the L2 (an atomic add counts its read and its write)
    double hbm_bytes = 0;  // to or from HBM (misses, write-backs)
};

// What one producer (a stream, for its own chip or a peer's) did to one chip's memory in one
// window. Carried by a Message of kind MemTraffic, delivered at the window's barrier.
struct MemTraffic {
    std::vector<MemUsage> usage;
    std::vector<std::int64_t> touched_regions;  // in the order they were first touched
};

// A producer's usage as the chip keeps it until it can no longer matter.
struct PublishedUsage {
    SimTime published_at = 0;  // usable by another stream from this simulated time on
    int source = 0;            // producer id (LogicalProcess::source_id)
    MemUsage usage;
};

class L2Residency {
public:
    // `capacity_regions`: how many regions the L2 holds (l2_bytes / region_bytes).
    explicit L2Residency(std::int64_t capacity_regions);

    // At a barrier: `region` was touched by traffic published at `at` (non-decreasing).
    void touch(std::int64_t region, SimTime at);
    // During a window (read-only): was `region` resident at publication time t?
    bool resident_at(std::int64_t region, SimTime t) const;
    // At a barrier: residency before `horizon` will not be asked again.
    void forget_before(SimTime horizon);
    std::int64_t resident_count() const { return resident_; }

private:
    struct Region {
        // [in, out) intervals of residency, oldest first; the last one may be open (out == kNever).
        std::vector<std::pair<SimTime, SimTime>> intervals;
        std::int64_t prev = -1;  // LRU neighbours (region ids), while resident
        std::int64_t next = -1;
    };
    Region& region(std::int64_t id);
    void unlink(std::int64_t id, Region& r);
    void push_front(std::int64_t id, Region& r);

    std::int64_t capacity_;
    std::int64_t resident_ = 0;
    std::int64_t closed_intervals_ = 0;  // since the last pruning
    std::int64_t head_ = -1;  // most recently used
    std::int64_t tail_ = -1;  // least recently used
    std::unordered_map<std::int64_t, Region> regions_;
};

class ChipMemory {
public:
    ChipMemory(std::int64_t l2_bytes, std::int64_t region_bytes);

    std::int64_t region_bytes() const { return region_bytes_; }
    std::int64_t region_of(std::int64_t address) const { return address / region_bytes_; }

    // ---- at barriers (single-threaded) ----
    // A producer's traffic of one window, published at `at` (the end of that window).
    void deliver(const MemTraffic& traffic, SimTime at, int source);
    // Usage that ended before `horizon`, and residency history before it, can no longer matter:
    // every booking still to come starts at or after it.
    void forget_before(SimTime horizon);

    // ---- during windows (read-only) ----
    const L2Residency& residency() const { return residency_; }
    // The published usage, in publication order, numbered from first_index() on.
    std::uint64_t first_index() const { return first_index_; }
    std::uint64_t end_index() const { return first_index_ + usage_.size(); }
    const PublishedUsage& usage_at(std::uint64_t index) const { return usage_[index - first_index_]; }

private:
    std::int64_t region_bytes_;
    L2Residency residency_;
    std::deque<PublishedUsage> usage_;
    std::uint64_t first_index_ = 0;
};

}  // namespace tandem
