#include "sim/exec/logical_process.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/block_slot.hpp"
#include "sim/exec/signal_store.hpp"
#include "sim/mem/global_memory.hpp"

// Where a stream stands, in words: the labels of its blocks and the messages of deadlocks and
// unschedulable launches (sim/exec/logical_process.hpp).
namespace tandem {

std::string LogicalProcess::stream_label() const {
    return fmt::format("rank {}, stream '{}', kernel '{}'", rank_, stream_name_, launch_->name);
}

std::string LogicalProcess::slot_label(int slot) const { return block_slot_label(slot, launch_->core_type.mix()); }

std::string LogicalProcess::part_label(const BlockCtx& blk) const {
    return fmt::format("{} on {} core {}", slot_label(blk.slot()), core_type_name(blk.core_type()), blk.core().index);
}

std::string LogicalProcess::where(const BlockCtx& blk) const {
    return fmt::format("rank {}, stream '{}', kernel '{}', {}, {} at {:.3f} us", rank_, stream_name_, launch_->name,
                       part_label(blk), blk.current_instr, to_us(blk.now()));
}

std::vector<std::string> LogicalProcess::describe_waiters() const {
    std::vector<std::string> lines;
    for (const ParkedWait& w : waiters_) {
        const int b = w.slot;
        const BlockCtx& blk = *blocks_[static_cast<std::size_t>(b)];
        const std::int32_t seen = chip(blk.wait_signal.rank).signals->value_at(blk.wait_signal.address, kNever);
        lines.push_back(fmt::format("rank {}, stream '{}', kernel '{}', {}: TWAIT on {} for value {} {}, "
                                    "seen {} (waiting since {:.3f} us)",
                                    rank_, stream_name_, launch_->name, slot_label(b),
                                    chip(blk.wait_signal.rank).gm->describe(blk.wait_signal.address),
                                    cmp_symbol(blk.wait_cmp), blk.wait_value, seen, to_us(blk.wait_since)));
    }
    for (int s : flag_waiters_) lines.push_back(describe_flag_wait(*blocks_[static_cast<std::size_t>(s)]));
    if (!lines.empty()) {
        std::string cause = unschedulable_cause();
        if (!cause.empty()) lines.push_back(std::move(cause));
    }
    return lines;
}

std::string LogicalProcess::unschedulable_cause() const {
    if (launch_ == nullptr || next_block_ >= launch_->blocks) return {};
    // Blocks wait on work that only blocks still queued behind them could do: they hold every
    // core (or cluster) while they spin, so the rest can never start.
    return fmt::format("{}: rank {}, stream '{}', kernel '{}' has {} blocks for {} {}: blocks 0..{} were started "
                       "and hold every one of them while waiting; blocks {}..{} were never scheduled",
                       kUnschedulableSpinnersCause, rank_,
                       stream_name_, launch_->name, launch_->blocks, places_, launch_->core_type.mix() ? "clusters" : "cores",
                       next_block_ - 1, next_block_, launch_->blocks - 1);
}

}  // namespace tandem
