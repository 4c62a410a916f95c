#include "kernels/common/device_barrier.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

DeviceBarrierLayout::DeviceBarrierLayout(int ranks_, std::int64_t region_offset_)
    : ranks(ranks_), region_offset(region_offset_) {}

double DeviceBarrierLayout::bytes_for(double ranks) { return std::ceil(4 * (ranks + 1) / kAlignBytes) * kAlignBytes; }

std::int64_t DeviceBarrierLayout::bytes() const { return static_cast<std::int64_t>(bytes_for(ranks)); }

void DeviceBarrierLayout::host_reset(HostContext& host, std::int64_t window_base) const {
    host.write_signals(window_base + entry_offset(0), ranks + 1, 0);
}

std::string DeviceBarrierLayout::name_of(int rank, std::int64_t offset) const {
    const std::int64_t rel = offset - region_offset;
    if (rel < 0 || rel % 4 != 0 || rel / 4 > ranks) return {};
    const std::int64_t i = rel / 4;
    if (i == ranks) return "arrival_count";
    if (i == rank) return "go_flag";
    return fmt::format("signal_matrix[{}]", i);
}

Task device_barrier(BlockCtx& blk, const DeviceBarrier& b) {
    const int me = b.my_rank;
    const SignalAddr arrival = b.entry(me, b.layout.ranks);  // the local arrival counter
    const SignalAddr go = b.entry(me, me);
    pipe_barrier(blk, PIPE_ALL);  // this block's stores have landed before it arrives
    if (blk.block_idx() != 0) {
        TNOTIFY(blk, arrival, 1, NotifyOp::AtomicAdd);
        co_await TWAIT(blk, go, CmpOp::GE, 1);
    } else {
        if (blk.block_num() > 1) co_await TWAIT(blk, arrival, CmpOp::GE, blk.block_num() - 1);
        for (int r = 0; r < b.layout.ranks; ++r)
            if (r != me) TNOTIFY(blk, b.entry(r, me), 1, NotifyOp::AtomicAdd);
        for (int r = 0; r < b.layout.ranks; ++r)
            if (r != me) co_await TWAIT(blk, b.entry(me, r), CmpOp::GE, 1);
        TNOTIFY(blk, go, 1, NotifyOp::Set);
    }
    pipe_barrier(blk, PIPE_ALL);
}

}  // namespace tandem::kernels
