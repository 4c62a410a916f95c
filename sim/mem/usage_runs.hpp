#pragma once
// What a stream publishes of its usage of one chip's memory in one window: runs of equal bins of
// kMemUsageBinPs (MemUsage with per_bin), in bin order, empty bins skipped, neighbouring bins of
// the same (L2, HBM) bytes in one run.
//
// Two ways to the same runs. A stream's own chip gets many short usages per window (every load
// and store of its blocks, a bin or two each): they are added to bins (UsageBins) and the bins
// walked (append_bin_runs). A peer gets few long ones: a remote store lasts tens of microseconds
// when the fabric is shared (a comm block's stores into 63 peers queue on its NIC), a hundred bins
// each to add, store and read back. For those the bins are not made (usages_to_runs): the usages'
// bin boundaries cut time into stretches in which each usage adds the same bytes to every bin, so
// a stretch's bins hold the same sum, added in the usages' order; the runs, their bytes and their
// ends are exactly those of adding every bin and walking them (test
// UsageRuns.SameRunsAsAddingEveryBin).
#include <cstdint>
#include <vector>

#include "sim/mem/chip_memory.hpp"

namespace tandem {

// Appends the runs of `bins` to `out` (merged with out's last run where it ends where the first
// begins with the same bytes) and empties `bins`.
void append_bin_runs(UsageBins& bins, std::vector<MemUsage>& out);

// What usages_to_runs works in, kept by its caller so that a window's call does not allocate.
struct UsageRunsScratch {
    std::vector<std::int64_t> first_bin;
    std::vector<std::int64_t> last_bin;
    std::vector<std::int64_t> bounds;
    std::vector<std::uint32_t> stretch_at;
    std::vector<std::uint32_t> event_start;
    std::vector<std::uint32_t> events;
    std::vector<std::uint32_t> fill;
    std::vector<std::uint64_t> covering;
    std::vector<double> shares;
};

// Replaces `usages` (spread evenly over their spans, not per_bin, in the order they were made) by
// the runs that adding them in that order to an empty UsageBins and walking it would give. It
// costs the stretches' covering usages (a few per usage, however many bins it spans), not its bins.
void usages_to_runs(std::vector<MemUsage>& usages, UsageRunsScratch& scratch);

}  // namespace tandem
