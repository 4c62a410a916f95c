#include "sim/exec/logical_process.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/core/cost_model.hpp"
#include "sim/profile.hpp"
#include "sim/sim_error.hpp"

// A stream's kernels and windows: starting a kernel, running a window up to its barrier, the
// booking horizon, finishing or aborting. The blocks' turns are in logical_process_blocks.cpp,
// TWAIT in logical_process_waits.cpp, what a window hands in at its barrier in
// logical_process_traffic.cpp, the messages of errors in logical_process_reports.cpp.
namespace tandem {


static_assert(Topology::kMaxRanks * kMaxStreamsPerRank <= kHostSourceBase,
              "logical process source ids must stay below the hosts'");
static_assert(StreamSanitizer::kCrossFlags == CrossCoreFlags::kFlagIds,
              "the sanitizer keeps a clock per cross-core flag id");
static_assert(kMaxStreamsPerRank <= static_cast<int>(kHostStream), "sanitizer thread keys tell streams from hosts");
static_assert(kMaxStreamsPerRank <= std::numeric_limits<decltype(InstrRecord::stream)>::max(),
              "a record holds any stream id");

namespace {
// source_id() packs the stream id below kMaxStreamsPerRank: checked before anything uses it.
int checked_stream_id(int rank, int stream_id, const std::string& name) {
    if (stream_id < 0 || stream_id >= kMaxStreamsPerRank) {
        throw SimError(fmt::format("rank {}: stream '{}' would be stream {} of its rank; a rank has at most {} streams "
                                   "(message source ids hold the stream in {} values per rank)",
                                   rank, name, stream_id, kMaxStreamsPerRank, kMaxStreamsPerRank));
    }
    return stream_id;
}
}  // namespace

LogicalProcess::LogicalProcess(MachinePort& machine, int rank, int stream_id, std::string stream_name)
    : machine_(machine),
      cost_(machine.cost()),
      topology_(machine.topology()),
      coord_(machine.coordinator()),
      chips_(machine.chips()),
      rank_(rank),
      stream_id_(checked_stream_id(rank, stream_id, stream_name)),
      stream_name_(std::move(stream_name)),
      record_log_(machine.record_log()),
      record_instructions_(machine.record_instructions_of(rank)),
      cores_(machine.profile().chip),
      memory_(*chip(rank).memory, rank, source_id(), cost_.l2_bps, cost_.hbm_bps) {}

StreamSanitizer* LogicalProcess::sanitize_kernel(bool on) {
    Sanitizer* s = machine_.sanitizer();
    if (!on || s == nullptr) return san_on_ = nullptr;
    if (!san_) san_ = std::make_unique<StreamSanitizer>(*s, SanStream{rank_, stream_id_, stream_name_, chip(rank_).gm});
    return san_on_ = san_.get();
}

LogicalProcess::~LogicalProcess() = default;

KernelStats LogicalProcess::run_kernel(const KernelLaunch& launch, SimTime start, int start_bound,
                                       const CompletionFn& on_complete) {
    launch_ = &launch;
    on_complete_ = &on_complete;
    // Read per kernel: the API logs only the calls it traces (Cluster::set_logging).
    record_log_ = machine_.record_log();
    record_instructions_ = machine_.record_instructions_of(rank_);
    functional_ = machine_.functional() && !launch.timing_only;
    const bool mix = launch.core_type.mix();
    blocks_.clear();
    blocks_.resize(static_cast<std::size_t>(launch.blocks) * (mix ? 3 : 1));
    parked_.assign(blocks_.size(), 0);
    next_block_ = 0;
    first_live_slot_ = 0;
    live_blocks_ = 0;
    kernel_start_ = start;
    kernel_end_ = start;
    stall_ps_ = 0;
    windows_run_ = 0;
    remote_store_bytes_ = remote_load_bytes_ = 0;
    instructions_before_ = instructions_;
    flags_.clear();
    flag_waiters_.clear();
    flag_wake_ = kNever;
    // A MIX block takes a cluster: AIC core c with AIV cores 2c and 2c + 1.
    places_ = mix ? std::min(cores_.count(CoreType::AIC), cores_.count(CoreType::AIV) / 2)
                  : cores_.count(launch.core_type.single());
    if (mix) {
        parts_left_.assign(static_cast<std::size_t>(launch.blocks), 0);
        place_of_.assign(static_cast<std::size_t>(launch.blocks), 0);
    }
    busy_before_ = {};
    sum_busy(busy_before_);
    memory_.begin_kernel();
    core_busy_before_.clear();
    stage_busy_.clear();
    for (CoreType t : {CoreType::AIC, CoreType::AIV}) ran_[static_cast<std::size_t>(t)].assign(static_cast<std::size_t>(cores_.count(t)), 0);
    const int first_wave = std::min(launch.blocks, places_);
    for (int i = 0; i < first_wave; ++i) start_block(next_block_++, i, start);
    finished_ = false;
    aborted_ = false;
    waiters_changed_ = true;  // a new slot at the coordinator: it has no watched words yet
    Coordinator& coord = coord_;
    // From here on the coordinator's pool runs the windows (run_window); this thread only waits.
    coord.join(*this, start_bound);
    coord.wait_even_if_failed([&] { return finished_; });
    blocks_.clear();
    links_.clear();
    if (aborted_) throw SimAborted();
    return stats_;
}

void LogicalProcess::run_window(SimTime window_end) {
    Coordinator& coord = coord_;
    try {
        if (coord.failed()) throw SimAborted();
        window_end_ = window_end;
        ++windows_run_;
        check_waiters();
        // Nothing can start before the booking horizon again: drop older bookings. No block
        // resumes below the window's lower bound (check_waiters() checks it; see begin_wait()).
        horizon_ = booking_horizon(window_end_ - coord.lookahead());
        memory_.forget_before(horizon_);  // the links forget when booked (link())
        process_until(window_end_);
        if (live_blocks_ > 0 && events_.empty() && waiters_.empty() && flag_wake_ >= kNever && !flag_waiters_.empty()) {
            throw SimError(cross_core_deadlock());  // only this kernel's blocks could set its flags
        }
        if (live_blocks_ == 0) {
            // The kernel's results must be in GM before anyone can look (its completion releases
            // the host): the deferred products are computed now, outside the windows' lockstep.
            complete_deferred_writes();
            finish_kernel();
            return;
        }
        // The coordinator keeps the watched words of the last barrier: they are handed in again
        // only when a block started or stopped waiting.
        const bool watched_changed = std::exchange(waiters_changed_, false);
        if (watched_changed) {
            watched_.clear();
            for (const ParkedWait& w : waiters_) watched_.push_back(w.signal);
        }
        // A TWAIT that started blocking in this window is first checked at the next window's
        // start, so that window must run here; older ones wake on writes to their words.
        // The last thing done here: once arrived, this process may already be running elsewhere.
        const SimTime next = std::min(events_.empty() ? kNever : events_.top().t, flag_wake_);
        send_memory_traffic();
        send_link_traffic();
        send_port_traffic();
        coord.arrive(*this, next, outbox_, watched_changed ? &watched_ : nullptr, new_waiters_);
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

void LogicalProcess::sum_busy(std::array<SimTime, kPipeCount>& busy) const {
    auto add = [&](CoreType t) {
        for (const CoreState& c : cores_.created(t))
            for (int p = 0; p < kPipeCount; ++p) busy[static_cast<std::size_t>(p)] += c.busy_ps[static_cast<std::size_t>(p)];
    };
    if (launch_->core_type.mix()) {
        add(CoreType::AIC);
        add(CoreType::AIV);
    } else {
        add(launch_->core_type.single());
    }
}

namespace {
// The pipes whose instructions book the GM fabric or links (TLOAD on MTE2, TSTORE on MTE3 or
// FIX: sim/isa/isa_move.cpp). A booking starts no earlier than its pipe's free_at when it issues.
constexpr Pipe kBookingPipes[] = {Pipe::MTE2, Pipe::MTE3, Pipe::FIX};
}  // namespace

SimTime LogicalProcess::booking_horizon(SimTime window_floor) {
    // A block's scalar issues far ahead of its pipes, so the calendars hold bookings well beyond
    // the window. Every booking still to come starts at or after the issue time (>= the window
    // floor) and at or after its pipe's free_at, which only grows. So what lies before the
    // lowest free_at of the booking pipes of the blocks on the cores is history. A finished block
    // holds its core until its release event, at or after its pipes' free_at, where the next
    // block of a wave starts.
    // The window floor bounds the issue times only once this process has caught up with the
    // window: a kernel that joins the coordinator while the others' window is ahead of its start
    // time (how far ahead depends on host thread timing) runs its first blocks below the floor.
    // So the lowest issue time of the live blocks bounds the floor too; it changes no result
    // (a lower horizon only keeps more history), but keeps the rule true in every such case.
    // A block parked in TWAIT (among the waiters, no event) counts as the window floor, not as
    // its issue time and pipes: it books nothing until a window's check_waiters() wakes it, at a
    // time at or above that window's lower bound (checked there), so at or above this window's
    // floor, and every booking it makes after that starts at or after its issue time. (It must
    // still count: the other blocks' pipes may be free only well past the floor.) Its stale
    // issue time and pipe free times (a ring rank's forwarding blocks wait most of the run) held
    // every calendar's history back.
    SimTime h = kNever;
    SimTime lowest_issue = window_floor;
    // Slots below next_block_'s are started (a MIX block has three); those below
    // first_live_slot_ are done.
    const int started_slots = next_block_ * (launch_->core_type.mix() ? 3 : 1);
    while (first_live_slot_ < started_slots && !blocks_[static_cast<std::size_t>(first_live_slot_)]) ++first_live_slot_;
    // (parked_ is read first: a parked block, most of a ring rank's comm blocks, is not touched.)
    if (!waiters_.empty()) h = window_floor;
    for (int b = first_live_slot_; b < started_slots; ++b) {
        if (parked_[static_cast<std::size_t>(b)] != 0) continue;
        const BlockCtx* blk = blocks_[static_cast<std::size_t>(b)].get();
        if (blk == nullptr) continue;
        if (!blk->finished) lowest_issue = std::min(lowest_issue, blk->now());
        for (Pipe p : kBookingPipes) {
            if (core_has_pipe(blk->core_type(), p)) h = std::min(h, blk->core().free_at[static_cast<std::size_t>(pipe_index(p))]);
        }
    }
    return h == kNever ? lowest_issue : std::max(lowest_issue, h);
}

void LogicalProcess::finish_kernel() {
    KernelStats stats{kernel_start_, kernel_end_, instructions_ - instructions_before_, stall_ps_, {}};
    stats.windows_run = windows_run_;
    stats.remote_store_bytes = remote_store_bytes_;
    stats.remote_load_bytes = remote_load_bytes_;
    sum_busy(stats.busy_ps);
    for (int p = 0; p < kPipeCount; ++p) stats.busy_ps[static_cast<std::size_t>(p)] -= busy_before_[static_cast<std::size_t>(p)];
    stats.cores = core_busy_before_;
    stats.stages = std::move(stage_busy_);
    stage_busy_.clear();
    for (CoreBusy& c : stats.cores) {
        const CoreState& core = cores_.created(c.type)[static_cast<std::size_t>(c.core)];
        for (std::size_t p = 0; p < c.busy_ps.size(); ++p) c.busy_ps[p] = core.busy_ps[p] - c.busy_ps[p];
    }
    std::sort(stats.cores.begin(), stats.cores.end(),
              [](const CoreBusy& a, const CoreBusy& b) { return std::pair(a.type, a.core) < std::pair(b.type, b.core); });
    stats_ = std::move(stats);
    // Hand the log in before leaving: on_complete may release a host from synchronize(), and
    // whatever it reads next (the event log) must already hold this kernel's records.
    if (record_instructions_) machine_.append_log(std::move(log_));
    if (record_log_) {
        for (auto& [id, link] : links_) machine_.append_link_usage(id, link->calendar().steps());
    }
    log_.clear();
    if (san_on_) san_on_->end_kernel();
    send_memory_traffic();
    hand_in_memory_log();  // after the last window's traffic, before a host can look
    memory_.end_kernel();
    send_link_traffic();
    send_port_traffic();
    coord_.leave(*this, outbox_, [&] {
        if (*on_complete_) (*on_complete_)(stats_);
        finished_ = true;
    });
}

void LogicalProcess::abort_kernel() {
    deferred_writes_.clear();
    memory_log_.clear();
    memory_.take_traffic(traffic_out_);
    traffic_out_.clear();
    memory_.end_kernel();
    links_used_.clear();
    log_.clear();
    if (san_on_) san_on_->end_kernel();
    coord_.leave(*this, outbox_, [&] {
        aborted_ = true;
        finished_ = true;
    });
}

void LogicalProcess::complete_deferred_writes() {
    if (deferred_writes_.empty()) return;
    try {
        machine_.complete_deferred_writes(deferred_writes_);
    } catch (const SimError& e) {
        deferred_writes_.clear();
        throw SimError(fmt::format("{}: computing its deferred results: {}", stream_label(), e.what()));
    }
    deferred_writes_.clear();
}

}  // namespace tandem
