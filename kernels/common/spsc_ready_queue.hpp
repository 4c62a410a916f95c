#pragma once
// Single-producer single-consumer ready queues in GM: how a compute block tells one comm block
// which output tiles are finished (Ascend's GEMM+AllReduce example,
// kernels/matmul_all_reduce/ascend/README.md "Ready queues"). One queue per producer block, 64-byte aligned: an int32 `count`, then int32
// `data[capacity]`.
//   producer:  data[slot] = value; count = slot + 1     (one producer: plain stores, no atomics;
//                                                         the two stores reach GM in order)
//   consumer:  TTEST count >= head + 1 (TWAIT when nothing is there), then read data[head]
// The words are signals (sim/exec/signal.hpp): the producer's stores are TNOTIFY Set, the
// consumer's reads TTEST/TWAIT. The host rewrites every queue before each use.
#include <cstdint>
#include <string>

#include "sim/exec/signal.hpp"
#include "sim/exec/task.hpp"

namespace tandem {
class BlockCtx;
class HostContext;
}  // namespace tandem

namespace tandem::kernels {

// One queue, as a kernel addresses it.
struct SpscQueue {
    int rank = 0;
    std::int64_t count_address = 0;
    std::int64_t data_address = 0;
    int capacity = 0;

    SignalAddr count() const { return SignalAddr{rank, count_address}; }
    SignalAddr slot(int s) const { return SignalAddr{rank, data_address + 4LL * s}; }
};

// `queues` queues of `capacity` entries each, one after the other from `region_offset` of an
// allocation (every queue starts on a 64-byte line).
struct SpscQueueSet {
    static constexpr std::int64_t kAlignBytes = 64;

    SpscQueueSet() = default;
    SpscQueueSet(int queues, int capacity, std::int64_t region_offset);

    int queues = 0;
    int capacity = 0;
    std::int64_t stride_bytes = 0;  // one queue's bytes, rounded up to the line
    std::int64_t region_offset = 0;

    static double bytes_for(double queues, double capacity);  // in double: absurd shapes give a message
    std::int64_t bytes() const { return stride_bytes * queues; }
    std::int64_t count_offset(int q) const { return region_offset + stride_bytes * q; }
    std::int64_t data_offset(int q, int slot) const { return count_offset(q) + 4 + 4LL * slot; }

    // Queue q of the allocation at `base` on `rank`.
    SpscQueue queue(int rank, std::int64_t base, int q) const;
    // Host reset: every count to 0 and every entry to -1 (a read of an entry before its write
    // is then seen as one).
    void host_reset(HostContext& host, std::int64_t base) const;
    // "ready_queue[3].count", "ready_queue[3].data[7]", or empty (trace names of signal words).
    std::string name_of(std::int64_t offset) const;
};

// Producer: publish `value` in `slot` (the slot-th entry this producer makes).
void spsc_enqueue(BlockCtx& blk, const SpscQueue& q, int slot, std::int32_t value);

// Consumer: wait until entry `head` is published (a TTEST; when it fails, a TWAIT on the count
// instead of spinning), then read it. The consumer of a deterministic producer knows the value
// to expect; the read is one scalar read of data[head] (a TTEST), and a different value is an
// error naming the queue, the slot, and both values.
Task spsc_dequeue(BlockCtx& blk, const SpscQueue& q, int head, std::int32_t expected);

}  // namespace tandem::kernels
