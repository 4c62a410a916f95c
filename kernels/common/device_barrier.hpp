#pragma once
// A barrier of one kernel's blocks across every rank, in the kernel (Ascend's GEMM+AllReduce
// example between its reduce-scatter and its all-gather, kernels/matmul_all_reduce/ascend/README.md
// "Comm kernel"):
//   1. every block drains its pipes (pipe_barrier(PIPE_ALL)): its stores have landed;
//   2. the rank's own blocks arrive: blocks other than 0 atomically add 1 to a local arrival
//      counter, and block 0 waits until it reaches blocks - 1 (without this step block 0 would
//      tell the other ranks "done" when only it was: the race the example's authors fixed);
//   3. block 0 atomically adds 1 into every other rank's matrix[my_rank] (TNOTIFY), waits until
//      each other rank's entry of its own matrix is >= 1, then sets the local go flag; the other
//      blocks wait on the go flag;
//   4. every block drains its pipes again.
// Every block of the kernel must be resident at once (they wait for each other).
//
// Layout: the signal matrix, int32 entries[ranks + 1] in the rank's window, 64-byte aligned, at
// the same offset on every rank: entry r is "rank r has arrived"; entry `ranks` is the local
// arrival counter; a rank's own entry, which no peer writes, is its go flag. (The example sizes
// the matrix (max ranks + 1) x 4 B; which of its words hold the counter and the go flag is not
// published: this is Tandem's reading.) The host zeroes the matrix before each use.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/exec/signal.hpp"
#include "sim/exec/task.hpp"

namespace tandem {
class BlockCtx;
class HostContext;
}  // namespace tandem

namespace tandem::kernels {

struct DeviceBarrierLayout {
    static constexpr std::int64_t kAlignBytes = 64;

    DeviceBarrierLayout() = default;
    DeviceBarrierLayout(int ranks, std::int64_t region_offset);

    int ranks = 0;
    std::int64_t region_offset = 0;  // in the window

    static double bytes_for(double ranks);
    std::int64_t bytes() const;
    std::int64_t entry_offset(int i) const { return region_offset + 4LL * i; }
    std::int64_t arrival_offset() const { return entry_offset(ranks); }

    void host_reset(HostContext& host, std::int64_t window_base) const;
    // "signal_matrix[3]", "arrival_count", "go_flag" (for `rank`'s window), or empty.
    std::string name_of(int rank, std::int64_t offset) const;
};

// One rank's view of the barrier: its rank and every rank's window base.
struct DeviceBarrier {
    DeviceBarrierLayout layout;
    int my_rank = 0;
    std::vector<std::int64_t> window_bases;  // by rank

    SignalAddr entry(int rank, int i) const {
        return SignalAddr{rank, window_bases[static_cast<std::size_t>(rank)] + layout.entry_offset(i)};
    }
};

// The barrier, run by every block of the kernel on every rank.
Task device_barrier(BlockCtx& blk, const DeviceBarrier& b);

}  // namespace tandem::kernels
