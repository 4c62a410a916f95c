// CrossCoreSetFlag / CrossCoreWaitFlag: counting flags between the cores of a kernel (Ascend
// FFTS; PTO ffts_cross_core_sync / wait_flag_dev). Which sub-blocks give and receive a count is
// decided here (the modes); the counters and their timing live in sim/exec/cross_core_flags.hpp
// and the logical process.
#include <fmt/format.h>

#include "sim/exec/logical_process.hpp"
#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

void check_flag_id(const char* instr, int flag) {
    if (flag < 0 || flag >= CrossCoreFlags::kFlagIds) {
        throw SimError(fmt::format("{}: flag id {} out of range 0..{}", instr, flag, CrossCoreFlags::kFlagIds - 1));
    }
}

// The sources whose sets make one count, and the targets that receive it (logical-process slots;
// a MIX block b has its AIC in slot 3b and its AIVs in 3b + 1 and 3b + 2).
struct FlagGroup {
    std::uint64_t key = 0;
    std::vector<int> sources;
    std::vector<int> targets;
};

FlagGroup group_of(BlockCtx& blk, int mode, int flag) {
    LogicalProcess& lp = blk.lp();
    const KernelLaunch& launch = lp.launch();
    const bool aic = blk.core_type() == CoreType::AIC;
    FlagGroup g;
    // The flag in 4 bits, the mode (0..2, checked by the caller) in 2, the direction in 1.
    static_assert(CrossCoreFlags::kFlagIds <= 16, "a group key holds the flag id in 4 bits");
    auto key = [&](std::uint64_t dir, std::uint64_t id) {
        return (id << 7) | (dir << 6) | (static_cast<std::uint64_t>(mode) << 4) | static_cast<std::uint64_t>(flag);
    };
    if (mode == 0) {
        if (launch.blocks > lp.concurrent_blocks()) {
            throw SimError(fmt::format("CrossCoreSetFlag mode 0 synchronises every block of the launch, so all of them "
                                       "must run at once: kernel '{}' has {} blocks for {} {}",
                                       launch.name, launch.blocks, lp.concurrent_blocks(),
                                       launch.core_type.mix() ? "clusters" : "cores"));
        }
        g.key = key(0, aic ? 0 : 1);
        for (int b = 0; b < launch.blocks; ++b) {
            if (!blk.mix()) {
                g.sources.push_back(b);
            } else if (aic) {
                g.sources.push_back(3 * b);
            } else {
                g.sources.push_back(3 * b + 1);
                g.sources.push_back(3 * b + 2);
            }
        }
        g.targets = g.sources;
        return g;
    }
    if (!blk.mix()) {
        throw SimError(fmt::format("CrossCoreSetFlag mode {} synchronises the cores of one cluster, which needs a MIX "
                                   "kernel (kernel '{}' runs on {} cores only)",
                                   mode, launch.name, core_type_name(blk.core_type())));
    }
    const int b = blk.block_idx();
    const std::vector<int> aivs{3 * b + 1, 3 * b + 2};
    if (mode == 1) {
        if (aic) throw SimError("CrossCoreSetFlag mode 1 synchronises the two AIVs of a cluster; the AIC cannot use it");
        g.key = key(0, static_cast<std::uint64_t>(b));
        g.sources = g.targets = aivs;
        return g;
    }
    // Mode 2: AIC -> both AIVs; AIVs -> the AIC, one count once both have set.
    g.key = key(aic ? 0 : 1, static_cast<std::uint64_t>(b));
    if (aic) {
        g.sources = {3 * b};
        g.targets = aivs;
    } else {
        g.sources = aivs;
        g.targets = {3 * b};
    }
    return g;
}

}  // namespace

void CrossCoreSetFlag(BlockCtx& blk, int mode, Pipe pipe, int flag) {
    const char* instr = "CrossCoreSetFlag";
    blk.current_instr = instr;
    check_flag_id(instr, flag);
    if (mode < 0 || mode > 2) throw SimError(fmt::format("{}: mode {} (Ascend's modes are 0, 1 and 2)", instr, mode));
    if (pipe == Pipe::ALL) throw SimError(fmt::format("{}: name one pipe whose drain sets the flag, not PIPE_ALL", instr));
    blk.require_pipe(pipe, instr);
    LogicalProcess& lp = blk.lp();
    const FlagGroup g = group_of(blk, mode, flag);
    CrossCoreFlags& flags = lp.cross_core_flags();
    const int conflict = flags.conflicting_target(g.key, flag, g.targets);
    if (conflict >= 0) {
        throw SimError(fmt::format("{}: flag {} of {} already receives counts from a CrossCoreSetFlag of another mode "
                                   "or direction; use another flag id",
                                   instr, flag, lp.slot_label(conflict)));
    }
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    SimTime done = issue;
    if (pipe != Pipe::S) {  // queued on the pipe: set when everything before it there is done
        done = blk.pipe_start(pipe, issue) + cost.set_flag_ps;
        blk.core().free_at[static_cast<std::size_t>(pipe_index(pipe))] = done;
    }
    blk.now_ref() = issue;
    const SimTime visible = done + cost.cross_core_flag_ps;
    if (StreamSanitizer* san = lp.sanitizer()) {
        // The set leaves once `pipe` has drained: what it carried is published with it.
        if (pipe != Pipe::S) san->pipe_waited(blk.san_part(), pipe);
        san->cross_flag(flag).join(*san->release(blk.san_part(), fmt::format("CrossCoreSetFlag({})", flag).c_str()));
    }
    flags.set(g.key, flag, g.sources, g.targets, blk.slot(), visible);
    lp.cross_core_flag_set(g.targets, flag);
    lp.count_instruction();
    isa_detail::record(blk, pipe, Opcode::CROSS_CORE_SET_FLAG, done, done, isa_detail::RecordArgs{0, 0, -1, flag, visible});
}

namespace isa_detail {

CrossCoreWait::CrossCoreWait(BlockCtx& blk, int flag) : blk_(blk), flag_(flag) {
    blk.current_instr = "CrossCoreWaitFlag";
    check_flag_id("CrossCoreWaitFlag", flag);
    issue_ = blk.now() + blk.cost().issue_ps;
}

bool CrossCoreWait::await_ready() {
    LogicalProcess& lp = blk_.lp();
    if (!lp.may_proceed(blk_, issue_)) return false;
    if (!lp.cross_core_try_take(blk_, flag_, issue_)) return false;
    blk_.now_ref() = issue_ + blk_.cost().wait_flag_ps;
    return true;
}

void CrossCoreWait::await_suspend(std::coroutine_handle<> h) { blk_.lp().park_cross_core_wait(blk_, flag_, issue_, h); }

void CrossCoreWait::await_resume() {
    blk_.current_instr = "CrossCoreWaitFlag";
    if (StreamSanitizer* san = blk_.lp().sanitizer()) san->acquire(blk_.san_part(), san->cross_flag(flag_));
    blk_.lp().count_instruction();
    record(blk_, Pipe::S, Opcode::CROSS_CORE_WAIT_FLAG, issue_ - blk_.cost().issue_ps, blk_.now(),
           RecordArgs{0, 0, -1, flag_, 0});
}

}  // namespace isa_detail

isa_detail::CrossCoreWait CrossCoreWaitFlag(BlockCtx& blk, int flag_id) { return isa_detail::CrossCoreWait(blk, flag_id); }

}  // namespace tandem
