#include "sim/exec/logical_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/core/block_slot.hpp"
#include "sim/core/cost_model.hpp"
#include "sim/exec/signal_store.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/net/topology.hpp"
#include "sim/profile.hpp"
#include "sim/sim_error.hpp"

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

LinkView& LogicalProcess::link(int link_id) {
    auto& slot = links_[link_id];
    if (!slot) slot = std::make_unique<LinkView>(machine_.link_hub(link_id), topology_.describe_link(link_id), topology_.link_bytes_per_s(link_id), source_id());
    // Forgotten when booked rather than at every window: a mesh comm stream has a calendar per
    // peer, and visiting them all each window would cost O(ranks) per window. A logged run keeps
    // the links' history for the trace's counters.
    if (!record_log_) slot->forget_before(horizon_);
    return *slot;
}

SimTime LogicalProcess::book_route(std::span<const int> route, SimTime start, double bytes, std::int64_t cap_bytes_per_s) {
    RouteScratch& s = route_scratch_;
    s.views.clear();
    s.path.clear();
    s.others.clear();
    s.background.clear();
    s.others.reserve(route.size());  // background points into it
    for (int id : route) {
        LinkView& view = link(id);
        s.views.push_back(&view);
        s.path.push_back(&view.calendar());
        s.others.push_back(view.others());
        s.background.push_back(&s.others.back());
    }
    const SimTime end = book_transfer(s.path, start, bytes, cap_bytes_per_s, s.background, &s.rates);
    for (std::size_t i = 0; i < route.size(); ++i) {
        if (s.views[i]->note_booked(s.rates, end)) links_used_.push_back(route[i]);
    }
    return end;
}

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

void LogicalProcess::send_memory_traffic() {
    memory_.take_traffic(traffic_out_);
    for (MemoryView::ChipTraffic& t : traffic_out_) {
        if (t.traffic->usage.empty() && t.traffic->touched_regions.empty()) continue;
        if (record_log_) {
            UsageBins& kept = memory_log_[t.rank];
            for (const MemUsage& u : t.traffic->usage) kept.add(u);
        }
        Message m;
        m.kind = Message::Kind::MemTraffic;
        m.visible_at = window_end_;  // what another stream may use from the barrier on
        m.dst_rank = t.rank;
        m.traffic = std::move(t.traffic);
        send(std::move(m));
    }
    traffic_out_.clear();
}

void LogicalProcess::send_link_traffic() {
    if (links_used_.empty()) return;
    auto traffic = std::make_shared<LinkTraffic>();
    traffic->usage.reserve(2 * links_used_.size());
    for (int id : links_used_) links_.at(id)->take_usage(id, traffic->usage);
    links_used_.clear();
    Message m;
    m.kind = Message::Kind::LinkTraffic;
    m.visible_at = window_end_;  // what another stream may use from the barrier on
    m.dst_rank = rank_;
    m.link_traffic = std::move(traffic);
    send(std::move(m));
}

void LogicalProcess::hand_in_memory_log() {
    for (const auto& [rank, bins] : memory_log_) {
        if (bins.l2.empty() && bins.hbm.empty()) continue;
        std::vector<MemBinBytes> out;
        // An empty store's bin numbers mean nothing: the range is that of the stores with bins.
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        std::int64_t end = std::numeric_limits<std::int64_t>::min();
        for (const BinnedUsage* u : {&bins.l2, &bins.hbm}) {
            if (u->empty()) continue;
            first = std::min(first, u->first_bin());
            end = std::max(end, u->end_bin());
        }
        for (std::int64_t b = first; b < end; ++b) {
            const auto l2 = std::llround(bins.l2.bytes_in(b));
            const auto hbm = std::llround(bins.hbm.bytes_in(b));
            if (l2 != 0 || hbm != 0) out.push_back(MemBinBytes{b, l2, hbm});
        }
        if (!out.empty()) machine_.append_memory_usage(rank, std::move(out));
    }
    memory_log_.clear();
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
    const SignalStore& store = *chip(blk.wait_signal.rank).signals;
    return compare(store.value_at(blk.wait_signal.address, t), blk.wait_cmp, blk.wait_value);
}

std::optional<SimTime> LogicalProcess::wait_first_true(BlockCtx& blk) const {
    // A ring rank's forwarding blocks wait for chunks that arrive hundreds of windows later, and
    // are checked at the start of every window their stream runs. Ops reach the store only at
    // barriers, so while the word has had no new op (its version, or while it does not exist the
    // store's word count, is the same) and the window ends no later than the first op the last
    // check did not reach, this check would read the same ops over the same times: false again.
    // (Folding between checks merges only ops the last check already read, and changes no value
    // at or after the window's lower bound.)
    const SignalStore& store = *chip(blk.wait_signal.rank).signals;
    if (blk.wait_word == nullptr) {
        if (blk.wait_quiet_until != 0 && blk.wait_seen_version == store.word_count() && window_end_ <= blk.wait_quiet_until)
            return std::nullopt;
        blk.wait_word = store.find(blk.wait_signal.address);
        if (blk.wait_word != nullptr) blk.wait_quiet_until = 0;  // its ops have not been read yet
    } else if (blk.wait_quiet_until != 0 && blk.wait_seen_version == blk.wait_word->version &&
               window_end_ <= blk.wait_quiet_until) {
        return std::nullopt;
    }
    SimTime next_op_at = kNever;
    auto t = SignalStore::first_time_true(blk.wait_word, blk.wait_cmp, blk.wait_value, blk.wait_since, window_end_,
                                          next_op_at);
    if (!t) {
        blk.wait_seen_version = blk.wait_word != nullptr ? blk.wait_word->version : store.word_count();
        blk.wait_quiet_until = next_op_at;
    }
    return t;
}

void LogicalProcess::begin_wait(BlockCtx& blk) {
    // Every write visible before this window's end is already in the store (it was delivered at
    // an earlier barrier: a message is never visible inside the window that produced it). One
    // visible after wait_since but inside this window wakes the block here, at its exact time: left
    // to check_waiters() at the next window, it would resume below that window's lower bound
    // (in time other processes may have simulated past) and read a history the barrier has folded.
    // A write launched before the waiting kernel started is the usual case: the producer kernel
    // on another stream ran ahead, its flags were delivered before this block reached its TWAIT.
    blk.wait_quiet_until = 0;  // wait_since may have moved: no memo of an earlier check applies
    const auto t = wait_first_true(blk);
    if (t) {
        events_.push(Event{*t, blk.slot()});  // still `waiting`: satisfied when popped at *t
        return;
    }
    parked_[static_cast<std::size_t>(blk.slot())] = 1;
    ParkedWait w{blk.slot(), blk.wait_signal, chip(blk.wait_signal.rank).signals, nullptr, 0, 0};
    copy_memo(w, blk);
    waiters_.push_back(w);
    new_waiters_ = true;
    waiters_changed_ = true;
}

bool LogicalProcess::still_quiet(const ParkedWait& w) const {
    // wait_first_true()'s early return, on the copy of the block's memo.
    if (w.quiet_until == 0 || window_end_ > w.quiet_until) return false;
    return w.seen_version == (w.word != nullptr ? w.word->version : w.store->word_count());
}

void LogicalProcess::copy_memo(ParkedWait& w, const BlockCtx& blk) const {
    w.word = blk.wait_word;
    w.seen_version = blk.wait_seen_version;
    w.quiet_until = blk.wait_quiet_until;
}

void LogicalProcess::check_waiters() {
    new_waiters_ = false;
    std::size_t keep = 0;
    for (ParkedWait& w : waiters_) {
        if (still_quiet(w)) {
            waiters_[keep++] = w;
            continue;
        }
        const int b = w.slot;
        BlockCtx& blk = *blocks_[static_cast<std::size_t>(b)];
        const auto t = wait_first_true(blk);
        if (t) {
            // Every write visible before the last window this block ran in had ended was in the
            // store when it began waiting (see begin_wait), so a write found now lies at or above
            // this window's lower bound. Below it, the block would act in time other processes
            // may already have simulated past (a conservative-synchronisation violation).
            if (*t < window_end_ - coord_.lookahead()) {
                throw SimError(fmt::format("internal: {} resumes from TWAIT at {} ps, below the window's lower bound "
                                           "{} ps (waiting since {} ps)",
                                           where(blk), *t, window_end_ - coord_.lookahead(),
                                           blk.wait_since));
            }
            blk.waiting = false;
            parked_[static_cast<std::size_t>(b)] = 0;
            stall_ps_ += *t - blk.wait_since;
            blk.now_ref() = *t + cost_.twait_poll_ps;
            events_.push(Event{blk.now(), b});
        } else {
            copy_memo(w, blk);
            waiters_[keep++] = w;
        }
    }
    if (keep != waiters_.size()) waiters_changed_ = true;
    waiters_.resize(keep);
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
