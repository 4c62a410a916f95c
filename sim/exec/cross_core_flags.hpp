#pragma once
// The cross-core flag counters of one running kernel (Ascend FFTS: CrossCoreSetFlag /
// CrossCoreWaitFlag), in simulated time. Knows sub-blocks only by their slot in the logical
// process; which slots form a group is the caller's business (sim/isa/isa_cross_core.cpp).
//
// A group is the set of sources whose sets together make one count, and the targets that
// receive it: mode 2 AIC -> AIVs (one source, two targets), mode 2 AIVs -> AIC (two sources, one
// target), mode 1 (the two AIVs, both ways), mode 0 (every sub-block of a core type). Each
// source's sets are kept as a sorted list of the times they become visible; the k-th count of a
// target arrives when every source's k-th earliest set has arrived. A target takes its counts in
// order (CrossCoreWaitFlag).
//
// The lists only ever gain entries, and a set is recorded when its block runs, at a simulated
// time no later than its issue (blocks run in time order between shared accesses). So when the
// logical process has done everything before time t, every set visible before t is known: a
// count time read then is final if it is <= t. The logical process uses that to wake waiters.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/sim_time.hpp"

namespace tandem {

class CrossCoreFlags {
public:
    static constexpr int kFlagIds = 16;     // FFTS flag ids 0..15
    static constexpr int kMaxPending = 15;  // a 4-bit counter per flag and core

    void clear();
    bool empty() const { return groups_.empty(); }

    // A target of `targets` that already receives `flag` from a group other than `group_key`
    // (one flag used in two modes), or -1.
    int conflicting_target(std::uint64_t group_key, int flag, const std::vector<int>& targets) const;
    // A set from slot `from` (one of `sources`) visible at `visible`, in the group `group_key`
    // (which `sources` and `targets` describe; the same for every set of the group; check
    // conflicting_target() first).
    void set(std::uint64_t group_key, int flag, const std::vector<int>& sources, const std::vector<int>& targets,
             int from, SimTime visible);

    // When the next count of `flag` for `target` arrives, as far as known (kNever: not yet).
    SimTime next_count(int target, int flag) const;
    // Take that count at time `t` (>= its arrival). Returns the number of counts that had
    // arrived and were not taken just before (more than kMaxPending is an overflow).
    int take(int target, int flag, SimTime t);
    // Counts known for `target` and not taken (whenever they arrive).
    int untaken(int target, int flag) const;
    // For a deadlock report: the sources that have not given the next count yet.
    std::vector<int> missing_sources(int target, int flag) const;

private:
    struct Group {
        std::vector<int> sources;
        std::vector<std::vector<SimTime>> sets;  // per source, visible times sorted
        SimTime count_time(std::size_t k) const;  // kNever if not every source has k + 1 sets
        std::size_t counts() const;
    };
    struct Counter {
        Group* group = nullptr;
        std::size_t taken = 0;
    };
    static_assert(kFlagIds <= 256, "counter_key holds the flag in 8 bits");
    static std::uint64_t counter_key(int target, int flag) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(target)) << 8) | static_cast<std::uint64_t>(flag);
    }

    std::unordered_map<std::uint64_t, std::unique_ptr<Group>> groups_;
    std::unordered_map<std::uint64_t, Counter> counters_;
};

}  // namespace tandem
