#include "sim/exec/logical_process.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/core/cost_model.hpp"
#include "sim/sim_error.hpp"

// How a stream's blocks take turns in a window: starting them on their cores, resuming the one
// with the lowest (time, slot), parking them, finishing them (sim/exec/logical_process.hpp).
namespace tandem {

void LogicalProcess::start_block(int block, int place, SimTime t) {
    if (!launch_->core_type.mix()) {
        start_part(BlockPlace{block, launch_->blocks, block, 0, 1, false},
                   cores_.cores(launch_->core_type.single())[static_cast<std::size_t>(place)], t);
        return;
    }
    // The three parts of a MIX block, in slots 3b (AIC), 3b + 1 and 3b + 2 (AIVs).
    parts_left_[static_cast<std::size_t>(block)] = 3;
    place_of_[static_cast<std::size_t>(block)] = place;
    start_part(BlockPlace{block, launch_->blocks, 3 * block, 0, 1, true}, cores_.cores(CoreType::AIC)[static_cast<std::size_t>(place)], t);
    for (int sub = 0; sub < 2; ++sub) {
        start_part(BlockPlace{block, launch_->blocks, 3 * block + 1 + sub, sub, 2, true},
                   cores_.cores(CoreType::AIV)[static_cast<std::size_t>(2 * place + sub)], t);
    }
}

void LogicalProcess::start_part(const BlockPlace& place, CoreState& core, SimTime t) {
    int& ran = ran_[static_cast<std::size_t>(core.type)][static_cast<std::size_t>(core.index)];
    if (ran == 0) {
        core_busy_before_.push_back(CoreBusy{core.type, core.index, core.busy_ps});
        ran = static_cast<int>(core_busy_before_.size());
    }
    auto ctx = std::make_unique<BlockCtx>(*this, core, place, t);
    ctx->task = launch_->fn(*ctx);
    ctx->resume_point = ctx->task.handle();
    if (san_on_) san_on_->start_block(ctx->san_part());
    blocks_[static_cast<std::size_t>(place.slot)] = std::move(ctx);
    ++live_blocks_;
    events_.push(Event{t, place.slot});
}

bool LogicalProcess::may_proceed(const BlockCtx& blk, SimTime t) const {
    if (t >= window_end_ || flag_wake_ <= t) return false;  // a CrossCoreWaitFlag may resume before t
    if (events_.empty()) return true;
    const Event& top = events_.top();
    return t < top.t || (t == top.t && blk.slot() < top.block);
}

void LogicalProcess::park(BlockCtx& blk, SimTime t, std::coroutine_handle<> h) {
    blk.resume_point = h;
    events_.push(Event{t, blk.slot()});
}

void LogicalProcess::park_waiting(BlockCtx& blk, std::coroutine_handle<> h) {
    blk.resume_point = h;
    blk.waiting = true;
    if (may_proceed(blk, blk.wait_since)) {
        begin_wait(blk);
    } else {
        events_.push(Event{blk.wait_since, blk.slot()});  // decide at its turn
    }
}

void LogicalProcess::process_until(SimTime end) {
    for (;;) {
        if (flag_wake_ < end && (events_.empty() || flag_wake_ <= events_.top().t)) {
            wake_flag_waiters();
            continue;
        }
        if (events_.empty() || events_.top().t >= end) break;
        const Event ev = events_.top();
        events_.pop();
        BlockCtx& blk = *blocks_[static_cast<std::size_t>(ev.block)];
        if (blk.finished) {
            // Its core is free at ev.t: the next block of the kernel takes it (for MIX, the
            // cluster takes the next block when all three parts of this one are done).
            kernel_end_ = std::max(kernel_end_, ev.t);
            check_flag_overflow_at_end(blk);
            const int place = launch_->core_type.mix() ? place_of_[static_cast<std::size_t>(blk.block_idx())] : blk.core().index;
            const bool place_free = !launch_->core_type.mix() || --parts_left_[static_cast<std::size_t>(blk.block_idx())] == 0;
            blocks_[static_cast<std::size_t>(ev.block)].reset();
            --live_blocks_;
            if (place_free && next_block_ < launch_->blocks) start_block(next_block_++, place, ev.t);
            continue;
        }
        if (blk.cross_wait_flag >= 0 && !take_cross_core_count(blk, ev.t)) continue;
        if (blk.waiting) {
            if (!wait_satisfied(blk, ev.t)) {
                blk.wait_since = ev.t;
                begin_wait(blk);
                continue;
            }
            blk.waiting = false;
            stall_ps_ += ev.t - blk.wait_since;  // nonzero when begin_wait found the write in this window
            blk.now_ref() = std::max(blk.now(), ev.t) + cost_.twait_poll_ps;
        }
        resume(blk);
    }
}

void LogicalProcess::resume(BlockCtx& blk) {
    // Only this block runs until it suspends: every instruction counted meanwhile was issued by
    // its core's scalar unit, one issue slot each (the SCALAR pipe's busy time).
    const std::int64_t issued_before = instructions_;
    blk.resume_point.resume();
    blk.core().busy_ps[static_cast<std::size_t>(pipe_index(Pipe::S))] +=
        (instructions_ - issued_before) * cost_.issue_ps;
    if (!blk.task.done()) return;
    try {
        blk.task.rethrow_if_failed();
    } catch (const SimError& e) {
        throw SimError(fmt::format("{}: {}", where(blk), e.what()));
    }
    finish_block(blk);
}

void LogicalProcess::finish_block(BlockCtx& blk) {
    SimTime end = blk.now();
    for (SimTime t : blk.core().free_at) end = std::max(end, t);
    blk.finished = true;
    if (san_on_) san_on_->end_block(blk.san_part());
    if (record_instructions_) {
        InstrRecord r;
        r.start = blk.start_time;
        r.end = end;
        r.rank = rank_;
        r.stream = static_cast<std::int16_t>(stream_id_);
        r.block = blk.block_idx();
        r.core = static_cast<std::int16_t>(blk.core().index);
        r.core_type = blk.core_type();
        r.pipe = Pipe::S;
        r.op = Opcode::BLOCK;
        log_.push_back(r);
    }
    events_.push(Event{end, blk.slot()});
}

}  // namespace tandem
