// The logical process's side of the cross-core flags (CrossCoreSetFlag / CrossCoreWaitFlag,
// sim/isa/isa_cross_core.cpp): waiters, their wake-up times, overflow and deadlock reports.
#include <algorithm>

#include <fmt/format.h>

#include "sim/exec/logical_process.hpp"
#include "sim/core/cost_model.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

// ---- cross-core flags ------------------------------------------------------------------------
// A waiter without its count is not an event: it waits in flag_waiters_, and flag_wake_ is the
// earliest time a count is known to arrive for any of them. When processing reaches that time,
// every set that could arrive earlier is known (see sim/exec/cross_core_flags.hpp), so the
// waiter becomes an event at exactly that time.

bool LogicalProcess::take_cross_core_count(BlockCtx& blk, SimTime t) {
    try {
        if (!cross_core_try_take(blk, blk.cross_wait_flag, t)) {
            add_flag_waiter(blk);
            return false;
        }
    } catch (const SimError& e) {
        throw SimError(fmt::format("{}: {}", where(blk), e.what()));
    }
    blk.cross_wait_flag = -1;
    blk.now_ref() = std::max(blk.now(), t) + cost_.wait_flag_ps;
    return true;
}

bool LogicalProcess::cross_core_try_take(BlockCtx& blk, int flag, SimTime t) {
    if (flags_.next_count(blk.slot(), flag) > t) return false;
    const int pending = flags_.take(blk.slot(), flag, t);
    if (pending > CrossCoreFlags::kMaxPending) {
        throw SimError(fmt::format("cross-core flag {} overflowed: {} counts arrived before this CrossCoreWaitFlag "
                                   "took one (the counter holds {})",
                                   flag, pending, CrossCoreFlags::kMaxPending));
    }
    return true;
}

void LogicalProcess::park_cross_core_wait(BlockCtx& blk, int flag, SimTime issue, std::coroutine_handle<> h) {
    blk.resume_point = h;
    blk.cross_wait_flag = flag;
    blk.wait_since = issue;
    if (may_proceed(blk, issue)) add_flag_waiter(blk);  // its turn came, its count has not
    else events_.push(Event{issue, blk.slot()});       // decide at its turn
}

void LogicalProcess::add_flag_waiter(BlockCtx& blk) {
    flag_waiters_.push_back(blk.slot());
    flag_wake_ = std::min(flag_wake_, flags_.next_count(blk.slot(), blk.cross_wait_flag));
}

void LogicalProcess::cross_core_flag_set(const std::vector<int>& targets, int flag) {
    for (int t : targets) {
        const BlockCtx* b = blocks_[static_cast<std::size_t>(t)].get();
        if (b == nullptr || b->finished) {  // nobody will take these counts any more
            if (flags_.untaken(t, flag) > CrossCoreFlags::kMaxPending) {
                throw SimError(fmt::format("cross-core flag {} overflowed: more than {} counts sent to {} after it "
                                           "finished",
                                           flag, CrossCoreFlags::kMaxPending, slot_label(t)));
            }
            continue;
        }
        if (b->cross_wait_flag == flag) flag_wake_ = std::min(flag_wake_, flags_.next_count(t, flag));
    }
}

void LogicalProcess::wake_flag_waiters() {
    const SimTime t = flag_wake_;
    flag_wake_ = kNever;
    std::size_t keep = 0;
    for (int slot : flag_waiters_) {
        const BlockCtx& b = *blocks_[static_cast<std::size_t>(slot)];
        const SimTime c = flags_.next_count(slot, b.cross_wait_flag);
        if (c <= t) {
            events_.push(Event{t, slot});  // taken when popped
        } else {
            flag_waiters_[keep++] = slot;
            flag_wake_ = std::min(flag_wake_, c);
        }
    }
    flag_waiters_.resize(keep);
}

void LogicalProcess::check_flag_overflow_at_end(const BlockCtx& blk) {
    if (flags_.empty()) return;
    for (int f = 0; f < CrossCoreFlags::kFlagIds; ++f) {
        const int left = flags_.untaken(blk.slot(), f);
        if (left > CrossCoreFlags::kMaxPending) {
            throw SimError(fmt::format("{}: cross-core flag {} overflowed: {} counts were sent to it and never taken "
                                       "(the counter holds {})",
                                       where(blk), f, left, CrossCoreFlags::kMaxPending));
        }
    }
}

std::string LogicalProcess::describe_flag_wait(const BlockCtx& blk) const {
    std::string missing;
    for (int s : flags_.missing_sources(blk.slot(), blk.cross_wait_flag))
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", slot_label(s));
    return fmt::format("rank {}, stream '{}', kernel '{}', {}: CrossCoreWaitFlag({}) waiting since {:.3f} us; {}", rank_,
                       stream_name_, launch_->name, part_label(blk), blk.cross_wait_flag, to_us(blk.wait_since),
                       missing.empty() ? std::string("no CrossCoreSetFlag of this flag has reached it")
                                       : "still to set it: " + missing);
}

std::string LogicalProcess::cross_core_deadlock() const {
    std::vector<std::string> lines;
    for (int s : flag_waiters_) lines.push_back(describe_flag_wait(*blocks_[static_cast<std::size_t>(s)]));
    std::sort(lines.begin(), lines.end());
    std::string msg = "deadlock: every running block of this kernel waits on a cross-core flag that no block will set";
    const std::string cause = unschedulable_cause();
    if (!cause.empty()) msg = "deadlock: " + cause;
    for (const auto& line : lines) msg += "\n  " + line;
    return msg;
}

}  // namespace tandem
