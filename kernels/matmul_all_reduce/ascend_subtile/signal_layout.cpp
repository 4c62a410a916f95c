#include "kernels/matmul_all_reduce/ascend_subtile/signal_layout.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

SubtileSignalLayout::SubtileSignalLayout(int tiles, int subtiles_per_tile, int comm_blocks_)
    : ready_slots(tiles * subtiles_per_tile), comm_blocks(comm_blocks_) {}

double SubtileSignalLayout::bytes_for(double tiles, double subtiles_per_tile, double comm_blocks) {
    const double slots = kLegacySlots + tiles * subtiles_per_tile + kSummaryStrideSlots * comm_blocks;
    return std::ceil(4 * slots / kAlignBytes) * kAlignBytes;
}

std::int64_t SubtileSignalLayout::bytes() const {
    return static_cast<std::int64_t>(bytes_for(ready_slots, 1, comm_blocks));
}

void SubtileSignalLayout::host_reset(HostContext& host, std::int64_t base) const {
    host.write_signals(base, static_cast<int>(bytes() / 4), 0);
}

std::string SubtileSignalLayout::name_of(std::int64_t offset) const {
    if (offset < 0 || offset % 4 != 0 || offset >= bytes()) return {};
    const std::int64_t slot = offset / 4;
    if (slot < kLegacySlots) return fmt::format("legacy_barrier[{}]", slot);
    if (slot < summary_slot(0)) return fmt::format("subtile_ready[{}]", slot - kLegacySlots);
    const std::int64_t rel = slot - summary_slot(0);
    if (rel % kSummaryStrideSlots == 0 && rel / kSummaryStrideSlots < comm_blocks)
        return fmt::format("ag_summary[{}]", rel / kSummaryStrideSlots);
    return {};
}

}  // namespace tandem::kernels
