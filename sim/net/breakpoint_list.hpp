#pragma once
// The breakpoints of a bandwidth calendar's step function: (time, rate) pairs in time order,
// stored 16 bytes each in leaves of a few dozen, with an array of each leaf's first time to find
// them. A booking touches a handful of neighbouring breakpoints, usually in one leaf, so it costs
// one search of the (interpolated) first-time array and a short move inside a leaf, and the data
// it touches lies together. A std::map cost a 48-byte node per breakpoint, scattered wherever
// the host threads' allocators put it, and a cache miss per level of an 18-level tree: at
// hundreds of ranks the compute stream's calendar holds over 10^5 breakpoints (the cores'
// pipes run far ahead of their scalar units, and a stream whose block waits on a signal may
// still book before all of them).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/sim_time.hpp"

namespace tandem {

struct Breakpoint {
    SimTime t;          // from this instant on...
    std::int64_t rate;  // ...this many bytes per second are booked (until the next breakpoint)
};

// A breakpoint as a leaf stores it: the rate is an index into the list's distinct rates (a
// calendar sees few: sums of a few transfer caps), 12 bytes instead of 16. A ring rank's compute
// stream holds 10^5 breakpoints booked ahead of its window (its blocks' scalars issue every load
// of a tile as soon as the tile's chunks have arrived), the bulk of a 384-rank run's memory.
#pragma pack(push, 4)
struct StoredBreakpoint {
    SimTime t;
    std::uint32_t rate_index;
};
#pragma pack(pop)
static_assert(sizeof(StoredBreakpoint) == 12);

class BreakpointList {
public:
    // A place in the list: a leaf and an index in it. Any change to the list invalidates it.
    struct Pos {
        std::size_t leaf = 0;
        std::size_t i = 0;
    };

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

    Pos begin() const { return Pos{head_, 0}; }
    bool is_end(Pos p) const { return p.leaf >= leaves_.size(); }
    bool is_begin(Pos p) const { return p.leaf == head_ && p.i == 0; }
    Breakpoint at(Pos p) const {
        const StoredBreakpoint& b = leaves_[p.leaf][p.i];
        return Breakpoint{b.t, rates_[b.rate_index]};
    }
    void next(Pos& p) const {
        if (++p.i == leaves_[p.leaf].size()) {
            ++p.leaf;
            p.i = 0;
        }
    }
    // p must not be begin().
    void prev(Pos& p) const {
        if (p.i == 0) {
            --p.leaf;
            p.i = leaves_[p.leaf].size();
        }
        --p.i;
    }

    // The last breakpoint with time <= t; false if there is none.
    bool find_last_at_or_before(SimTime t, Pos& p) const;

    // Replaces the `count` breakpoints from p on (p may be the end) by `entries`, which must keep
    // the list in strictly increasing time order.
    void replace(Pos p, std::size_t count, std::span<const Breakpoint> entries);

    // Erases every breakpoint before p, and p itself too when `including` is set.
    void erase_before(Pos p, bool including);

    std::vector<std::pair<SimTime, std::int64_t>> to_vector() const;

private:
    // Leaves of at most kLeafMax breakpoints; a fuller one is split in two.
    static constexpr std::size_t kLeafMax = 64;

    std::size_t leaf_for(SimTime t) const;
    std::uint32_t rate_index(std::int64_t rate);
    // Writes `entries` over leaf[at, at + entries.size()).
    void encode_into(std::vector<StoredBreakpoint>& leaf, std::size_t at, std::span<const Breakpoint> entries);
    void fix_leaves(std::size_t first, std::size_t last);
    // Leaf j holds more than kLeafMax: moves part of it into a neighbour with room (false: none has).
    bool share_with_neighbour(std::size_t j);

    // leaves_[head_ ..] are in use, in time order, and never empty; those before head_ are
    // released and dropped in bulk (forgetting history erases from the front).
    std::vector<std::vector<StoredBreakpoint>> leaves_;
    std::vector<SimTime> first_;  // first_[j] == leaves_[j].front().t for j >= head_
    std::size_t head_ = 0;
    std::size_t size_ = 0;
    // The distinct rates the breakpoints use (never shrinks: a calendar lives one kernel), found
    // by a short scan while they are few, by index_ beyond that.
    std::vector<std::int64_t> rates_;
    std::unordered_map<std::int64_t, std::uint32_t> index_;
    // In front of index_: the index of a recently encoded rate, by a hash of the rate (a busy
    // calendar's segments reuse a few rates over and over; a hash-map lookup each costs more).
    static constexpr std::size_t kRecentRates = 64;
    struct RecentRate {
        std::int64_t rate = -1;  // rates are never negative: an empty slot
        std::uint32_t index = 0;
    };
    std::array<RecentRate, kRecentRates> recent_{};
};

}  // namespace tandem
