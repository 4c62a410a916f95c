#include "sim/exec/logical_process.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/isa/deferred_drain.hpp"
#include "sim/machine/cluster.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

LogicalProcess::LogicalProcess(Cluster& cluster, int rank, int stream_id, std::string stream_name)
    : cluster_(cluster),
      rank_(rank),
      stream_id_(stream_id),
      stream_name_(std::move(stream_name)),
      record_log_(cluster.options().record_log),
      fabric_(std::make_unique<BandwidthCalendar>(fmt::format("rank {} GM fabric", rank), cluster.cost().fabric_bps)) {}

LogicalProcess::~LogicalProcess() = default;

int LogicalProcess::source_id() const { return rank_ * 16 + stream_id_; }

BandwidthCalendar& LogicalProcess::link(int link_id) {
    auto& slot = links_[link_id];
    if (!slot) slot = std::make_unique<BandwidthCalendar>(cluster_.topology().describe_link(link_id), cluster_.cost().link_bps);
    return *slot;
}

KernelStats LogicalProcess::run_kernel(const KernelLaunch& launch, SimTime start, int start_bound,
                                       const CompletionFn& on_complete) {
    launch_ = &launch;
    on_complete_ = &on_complete;
    data_effects_ = cluster_.functional() && !launch.timing_only;
    blocks_.clear();
    blocks_.resize(static_cast<std::size_t>(launch.blocks));
    next_block_ = 0;
    live_blocks_ = 0;
    kernel_start_ = start;
    kernel_end_ = start;
    stall_ps_ = 0;
    windows_run_ = 0;
    instructions_before_ = instructions_;
    std::vector<CoreState>& cores = cluster_.chip(rank_).cores(launch.core_type);
    busy_before_ = {};
    for (const CoreState& c : cores)
        for (int p = 0; p < kPipeCount; ++p) busy_before_[static_cast<std::size_t>(p)] += c.busy_ps[static_cast<std::size_t>(p)];
    const int first_wave = std::min<int>(launch.blocks, static_cast<int>(cores.size()));
    for (int i = 0; i < first_wave; ++i) start_block(next_block_++, cores[static_cast<std::size_t>(i)], start);
    finished_ = false;
    aborted_ = false;
    Coordinator& coord = cluster_.coordinator();
    // From here on the coordinator's pool runs the windows (run_window); this thread only waits.
    coord.join(*this, start_bound);
    coord.wait_even_if_failed([&] { return finished_; });
    blocks_.clear();
    links_.clear();
    // A fresh calendar for the next kernel: nothing booked by this one is still in flight.
    fabric_ = std::make_unique<BandwidthCalendar>(fabric_->name(), fabric_->capacity());
    if (aborted_) throw SimAborted();
    return stats_;
}

void LogicalProcess::run_window(SimTime window_end) {
    Coordinator& coord = cluster_.coordinator();
    try {
        if (coord.failed()) throw SimAborted();
        window_end_ = window_end;
        ++windows_run_;
        // Nothing can start before the window's lower bound again: drop older bookings.
        const SimTime horizon = window_end_ - coord.lookahead();
        fabric_->forget_before(horizon);
        if (!record_log_) {  // a logged run keeps the links' history for the trace's counters
            for (auto& [id, link] : links_) link->forget_before(horizon);
        }
        check_waiters();
        process_until(window_end_);
        if (live_blocks_ == 0) {
            // The kernel's results must be in GM before anyone can look (its completion releases
            // the host): the deferred products are computed now, outside the windows' lockstep.
            complete_deferred_writes();
            finish_kernel();
            return;
        }
        watched_.clear();
        for (int b : waiters_) watched_.push_back(blocks_[static_cast<std::size_t>(b)]->wait_signal);
        // A TWAIT that started blocking in this window is first checked at the next window's
        // start, so that window must run here; older ones wake on writes to their words.
        // The last thing done here: once arrived, this process may already be running elsewhere.
        coord.arrive(*this, events_.empty() ? kNever : events_.top().t, outbox_, watched_, new_waiters_);
    } catch (const SimAborted&) {
        abort_kernel();
    } catch (const SimError& e) {
        coord.fail(e.what());
        abort_kernel();
    } catch (const std::exception& e) {
        coord.fail(fmt::format("internal error in {}: {}", stream_label(), e.what()));
        abort_kernel();
    }
}

void LogicalProcess::finish_kernel() {
    KernelStats stats{kernel_start_, kernel_end_, instructions_ - instructions_before_, stall_ps_, {}};
    stats.windows_run = windows_run_;
    for (const CoreState& c : cluster_.chip(rank_).cores(launch_->core_type))
        for (int p = 0; p < kPipeCount; ++p) stats.busy_ps[static_cast<std::size_t>(p)] += c.busy_ps[static_cast<std::size_t>(p)];
    for (int p = 0; p < kPipeCount; ++p) stats.busy_ps[static_cast<std::size_t>(p)] -= busy_before_[static_cast<std::size_t>(p)];
    stats_ = stats;
    // Hand the log in before leaving: on_complete may release a host from synchronize(), and
    // whatever it reads next (the event log) must already hold this kernel's records.
    if (record_log_) {
        cluster_.append_log(std::move(log_));
        for (auto& [id, link] : links_) cluster_.append_link_usage(id, link->steps());
    }
    log_.clear();
    cluster_.coordinator().leave(*this, outbox_, [&] {
        if (*on_complete_) (*on_complete_)(stats_);
        finished_ = true;
    });
}

void LogicalProcess::abort_kernel() {
    deferred_writes_.clear();
    log_.clear();
    cluster_.coordinator().leave(*this, outbox_, [&] {
        aborted_ = true;
        finished_ = true;
    });
}

void LogicalProcess::complete_deferred_writes() {
    if (deferred_writes_.empty()) return;
    try {
        tandem::complete_deferred_writes(deferred_writes_, cluster_.workers());
    } catch (const SimError& e) {
        deferred_writes_.clear();
        throw SimError(fmt::format("{}: computing its deferred results: {}", stream_label(), e.what()));
    }
    deferred_writes_.clear();
}

void LogicalProcess::start_block(int block, CoreState& core, SimTime t) {
    auto ctx = std::make_unique<BlockCtx>(*this, core, block, launch_->blocks, t);
    ctx->task = launch_->fn(*ctx);
    ctx->resume_point = ctx->task.handle();
    blocks_[static_cast<std::size_t>(block)] = std::move(ctx);
    ++live_blocks_;
    events_.push(Event{t, block});
}

bool LogicalProcess::may_proceed(const BlockCtx& blk, SimTime t) const {
    if (t >= window_end_) return false;
    if (events_.empty()) return true;
    const Event& top = events_.top();
    return t < top.t || (t == top.t && blk.block_idx() < top.block);
}

void LogicalProcess::park(BlockCtx& blk, SimTime t, std::coroutine_handle<> h) {
    blk.resume_point = h;
    events_.push(Event{t, blk.block_idx()});
}

void LogicalProcess::park_waiting(BlockCtx& blk, std::coroutine_handle<> h) {
    blk.resume_point = h;
    blk.waiting = true;
    if (may_proceed(blk, blk.wait_since)) {
        waiters_.push_back(blk.block_idx());
        new_waiters_ = true;
    } else {
        events_.push(Event{blk.wait_since, blk.block_idx()});  // decide at its turn
    }
}

void LogicalProcess::send(Message m) {
    m.source = source_id();
    m.seq = seq_++;
    if (m.visible_at < window_end_) {
        throw SimError(fmt::format("internal: message visible at {} ps inside the current window (ends {} ps); "
                                   "a latency in the profile is below the coordinator's lookahead",
                                   m.visible_at, window_end_));
    }
    outbox_.push_back(std::move(m));
}

bool LogicalProcess::wait_satisfied(const BlockCtx& blk, SimTime t) const {
    const SignalStore& store = cluster_.chip(blk.wait_signal.rank).signals;
    return compare(store.value_at(blk.wait_signal.address, t), blk.wait_cmp, blk.wait_value);
}

void LogicalProcess::check_waiters() {
    new_waiters_ = false;
    std::size_t keep = 0;
    for (int b : waiters_) {
        BlockCtx& blk = *blocks_[static_cast<std::size_t>(b)];
        const SignalStore& store = cluster_.chip(blk.wait_signal.rank).signals;
        auto t = store.first_time_true(blk.wait_signal.address, blk.wait_cmp, blk.wait_value, blk.wait_since, window_end_);
        if (t) {
            blk.waiting = false;
            stall_ps_ += *t - blk.wait_since;
            blk.now_ref() = *t + cluster_.cost().twait_poll_ps;
            events_.push(Event{blk.now(), b});
        } else {
            waiters_[keep++] = b;
        }
    }
    waiters_.resize(keep);
}

void LogicalProcess::process_until(SimTime end) {
    while (!events_.empty() && events_.top().t < end) {
        const Event ev = events_.top();
        events_.pop();
        BlockCtx& blk = *blocks_[static_cast<std::size_t>(ev.block)];
        if (blk.finished) {
            // Its core is free at ev.t: the next block of the kernel takes it.
            CoreState& core = blk.core();
            kernel_end_ = std::max(kernel_end_, ev.t);
            blocks_[static_cast<std::size_t>(ev.block)].reset();
            --live_blocks_;
            if (next_block_ < launch_->blocks) start_block(next_block_++, core, ev.t);
            continue;
        }
        if (blk.waiting) {
            if (!wait_satisfied(blk, ev.t)) {
                blk.wait_since = ev.t;
                waiters_.push_back(ev.block);
                new_waiters_ = true;
                continue;
            }
            blk.waiting = false;
            blk.now_ref() = std::max(blk.now(), ev.t) + cluster_.cost().twait_poll_ps;
        }
        resume(blk);
    }
}

void LogicalProcess::resume(BlockCtx& blk) {
    blk.resume_point.resume();
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
    if (record_log_) {
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
    events_.push(Event{end, blk.block_idx()});
}

std::string LogicalProcess::stream_label() const {
    return fmt::format("rank {}, stream '{}', kernel '{}'", rank_, stream_name_, launch_->name);
}

std::string LogicalProcess::where(const BlockCtx& blk) const {
    return fmt::format("rank {}, stream '{}', kernel '{}', block {} on {} core {}, {} at {:.3f} us", rank_,
                       stream_name_, launch_->name, blk.block_idx(), core_type_name(blk.core_type()),
                       blk.core().index, blk.current_instr, to_us(blk.now()));
}

std::vector<std::string> LogicalProcess::describe_waiters() const {
    std::vector<std::string> lines;
    for (int b : waiters_) {
        const BlockCtx& blk = *blocks_[static_cast<std::size_t>(b)];
        const std::int32_t seen = cluster_.chip(blk.wait_signal.rank).signals.value_at(blk.wait_signal.address, kNever);
        lines.push_back(fmt::format("rank {}, stream '{}', kernel '{}', block {}: TWAIT on {} for value {} {}, "
                                    "seen {} (waiting since {:.3f} us)",
                                    rank_, stream_name_, launch_->name, b,
                                    cluster_.describe_address(blk.wait_signal.rank, blk.wait_signal.address),
                                    cmp_symbol(blk.wait_cmp), blk.wait_value, seen, to_us(blk.wait_since)));
    }
    return lines;
}

}  // namespace tandem
