#include "kernels/common/spsc_ready_queue.hpp"

#include <cmath>

#include <fmt/format.h>

#include "kernels/common/int_math.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {

SpscQueueSet::SpscQueueSet(int queues_, int capacity_, std::int64_t region_offset_)
    : queues(queues_), capacity(capacity_), stride_bytes(round_up(4 + 4LL * capacity_, kAlignBytes)),
      region_offset(region_offset_) {}

double SpscQueueSet::bytes_for(double queues, double capacity) {
    return queues * std::ceil((4 + 4 * capacity) / kAlignBytes) * kAlignBytes;
}

SpscQueue SpscQueueSet::queue(int rank, std::int64_t base, int q) const {
    return SpscQueue{rank, base + count_offset(q), base + data_offset(q, 0), capacity};
}

void SpscQueueSet::host_reset(HostContext& host, std::int64_t base) const {
    for (int q = 0; q < queues; ++q) {
        host.write_signals(base + count_offset(q), 1, 0);
        if (capacity > 0) host.write_signals(base + data_offset(q, 0), capacity, -1);
    }
}

std::string SpscQueueSet::name_of(std::int64_t offset) const {
    const std::int64_t rel = offset - region_offset;
    if (rel < 0 || rel >= bytes() || rel % 4 != 0) return {};
    const std::int64_t q = rel / stride_bytes;
    const std::int64_t word = rel % stride_bytes / 4;
    if (word == 0) return fmt::format("ready_queue[{}].count", q);
    if (word - 1 < capacity) return fmt::format("ready_queue[{}].data[{}]", q, word - 1);
    return {};
}

void spsc_enqueue(BlockCtx& blk, const SpscQueue& q, int slot, std::int32_t value) {
    if (slot < 0 || slot >= q.capacity) {
        throw SimError(fmt::format("ready queue at {:#x} on rank {}: slot {} is outside its {} entries", q.count_address,
                                   q.rank, slot, q.capacity));
    }
    TNOTIFY(blk, q.slot(slot), value, NotifyOp::Set);
    TNOTIFY(blk, q.count(), slot + 1, NotifyOp::Set);
}

// The reads are separate statements: GCC 12 miscompiles `if (!co_await A) co_await B;` (resuming
// the coroutine jumps to an invalid resume point: SIGILL/SIGSEGV at the first TTEST that parks).
Task spsc_dequeue(BlockCtx& blk, const SpscQueue& q, int head, std::int32_t expected) {
    const bool ready = co_await TTEST(blk, q.count(), CmpOp::GE, head + 1);
    if (!ready) co_await TWAIT(blk, q.count(), CmpOp::GE, head + 1);
    const bool published = co_await TTEST(blk, q.slot(head), CmpOp::EQ, expected);
    if (!published) {
        throw SimError(fmt::format("ready queue at {:#x} on rank {}, block {}: entry {} does not hold {} (the producer "
                                   "published something else)",
                                   q.count_address, q.rank, blk.block_idx(), head, expected));
    }
}

}  // namespace tandem::kernels
