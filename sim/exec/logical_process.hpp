#pragma once
// A logical process: one stream of one rank while it runs a kernel. It owns the kernel's blocks
// (coroutines), puts them on the cores of its type (more blocks than cores run in waves: the
// first core to free takes the next block; a MIX kernel's block takes a whole cluster, one AIC
// and its two AIVs, and the cluster takes the next block when all three parts are done), and
// runs them in simulated-time order: an event queue keyed by (time, slot), never by host arrival. Blocks run ahead freely through
// core-local instructions; an instruction that touches anything shared (GM bandwidth, a link,
// a signal) waits until it is the earliest thing left in this process and inside the window the
// coordinator has opened. Everything another stream can observe leaves as a timestamped message.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/pipe.hpp"
#include "sim/core/stream_cores.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/exec/coordinator.hpp"
#include "sim/exec/cross_core_flags.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/exec/machine_port.hpp"
#include "sim/exec/message.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/mem/memory_view.hpp"
#include "sim/net/bandwidth_calendar.hpp"
#include "sim/net/link_view.hpp"
#include "sim/sanitize/stream_sanitizer.hpp"

namespace tandem {

class SignalStore;

using KernelFn = std::function<Task(BlockCtx&)>;

// What a launch runs on: AIC cores, AIV cores, or MIX (Ascend's MIX mode: block i runs on one
// cluster, AIC core c with AIV cores 2c and 2c+1, and `fn` is called once for each of the three
// with a BlockCtx whose core_type() and sub_block_idx() say which part it is).
enum class KernelType : std::uint8_t { AIC, AIV, MIX };

// A KernelType that also converts from CoreType, so `KernelLaunch{"k", CoreType::AIV, n, fn}`
// and `KernelLaunch{"k", KernelType::MIX, n, fn}` both read naturally.
struct LaunchCores {
    KernelType type = KernelType::AIC;
    constexpr LaunchCores() = default;
    constexpr LaunchCores(KernelType t) : type(t) {}  // NOLINT(google-explicit-constructor)
    constexpr LaunchCores(CoreType t) : type(t == CoreType::AIC ? KernelType::AIC : KernelType::AIV) {}  // NOLINT
    constexpr bool mix() const { return type == KernelType::MIX; }
    // The cores of a single-type launch (AIC for MIX: its blocks are counted in clusters).
    constexpr CoreType single() const { return type == KernelType::AIV ? CoreType::AIV : CoreType::AIC; }
    constexpr bool operator==(const LaunchCores& o) const { return type == o.type; }
};

struct KernelLaunch {
    std::string name;
    LaunchCores core_type = CoreType::AIC;
    int blocks = 1;
    KernelFn fn;
    // In a functional cluster, run this launch for its timing only: no data moved or computed.
    // For launches whose results nobody reads (a benchmark view that is only timed); timing never
    // depends on data, so its times are the same either way.
    bool timing_only = false;
    // Optional, for --sanitize: what every rank's launch at the same index of the same stream
    // must agree on (a collective kernel's shape and dtype). Ranks that launch it with different
    // signatures are reported (disagreeing ranks); empty: not compared.
    std::string signature = {};
};

// One core's part of a kernel: how long each of its pipes was busy while the kernel's blocks ran
// on it. Busy is the sum of the [start, end) of the instructions the pipe executed (a pipe runs
// one at a time, so they never overlap); time a pipe spends waiting in wait_flag, pipe_barrier or
// TWAIT is not busy. SCALAR counts one issue slot (scalar_issue_cycles) per instruction the
// core's scalar unit issued, and nothing for the time it is blocked.
struct CoreBusy {
    CoreType type = CoreType::AIC;
    int core = 0;  // index among the stream's cores of that type
    std::array<SimTime, kPipeCount> busy_ps{};
};

// One stage of a kernel (BlockCtx::set_stage: the op names its stages, sim/ only numbers them):
// the data-pipe instructions (not SCALAR's) its blocks issued while in it. Busy per pipe is
// summed over those blocks, as CoreBusy's is over a core's.
struct StageBusy {
    SimTime start = kNever;  // its first instruction's start
    SimTime end = 0;         // its last instruction's end
    int blocks = 0;          // blocks (MIX: parts) that issued one
    std::array<SimTime, kPipeCount> busy_ps{};
    // Each item's window (BlockCtx::set_stage's item: moe_ffn's local expert), by item: its
    // first instruction's start and last one's end over every block (start kNever: none).
    std::vector<std::pair<SimTime, SimTime>> items{};
};

struct KernelStats {
    SimTime start = 0;          // first block started (its core took it)
    SimTime end = 0;            // last block done on its core
    std::int64_t instructions = 0;
    SimTime twait_stall_ps = 0; // summed over blocks
    std::array<SimTime, kPipeCount> busy_ps{};  // per pipe, summed over the kernel's cores
    std::vector<CoreBusy> cores{};  // per core that ran at least one block, by (type, index)
    std::int64_t windows_run = 0;  // coordinator windows this stream was woken for (host cost)
    // Bytes this kernel moved across the interconnect: stored (plain or atomic-add) into other
    // ranks' GM, and loaded from other ranks' GM. Measured per instruction, whatever the mode.
    std::int64_t remote_store_bytes = 0;
    std::int64_t remote_load_bytes = 0;
    std::vector<StageBusy> stages{};  // by stage id; empty when the kernel named none
};

class LogicalProcess : public Participant {
public:
    // Throws SimError when `stream_id` is not below kMaxStreamsPerRank (see source_id()).
    LogicalProcess(MachinePort& machine, int rank, int stream_id, std::string stream_name);
    ~LogicalProcess() override;

    // Runs `launch` starting at `start` to completion; returns its statistics. Throws SimAborted
    // when the run fails (the error itself is reported through the coordinator).
    // `start_bound` is the coordinator bound that stood for this kernel while it was queued.
    // `on_complete` runs under the coordinator's lock as the kernel leaves the simulation.
    using CompletionFn = std::function<void(const KernelStats&)>;
    KernelStats run_kernel(const KernelLaunch& launch, SimTime start, int start_bound = -1,
                           const CompletionFn& on_complete = {});

    int rank() const { return rank_; }
    int stream_id() const { return stream_id_; }
    const std::string& stream_name() const { return stream_name_; }
    MachinePort& machine() { return machine_; }
    const CostModel& cost() const { return cost_; }
    const Topology& topology() const { return topology_; }
    int ranks() const { return static_cast<int>(chips_.size()); }
    // Rank `rank`'s chip (0 <= rank < ranks()).
    const ChipParts& chip(int rank) const { return chips_[static_cast<std::size_t>(rank)]; }
    // This stream's id in the coordinator's total order of messages: rank * kMaxStreamsPerRank
    // + stream id (hosts use ids from kHostSourceBase on, sim/exec/message.hpp).
    int source_id() const { return rank_ * kMaxStreamsPerRank + stream_id_; }
    // Does the running kernel move and compute data? (functional cluster, launch not timing-only)
    bool functional() const { return functional_; }

    // ---- used by instructions ----
    // May `blk` act on shared state at time t now? (t inside the window and nothing earlier left.)
    bool may_proceed(const BlockCtx& blk, SimTime t) const;
    // Suspend `blk` until it is its turn at time t.
    void park(BlockCtx& blk, SimTime t, std::coroutine_handle<> h);
    // Suspend `blk` on a signal condition (TWAIT).
    void park_waiting(BlockCtx& blk, std::coroutine_handle<> h);
    void send(Message m);
    // A deferred write (sim/mem/gm_deferred.hpp) this kernel made: completed before it ends.
    void defer(std::shared_ptr<PendingGmWrite> w) { deferred_writes_.push_back(std::move(w)); }
    void log(const InstrRecord& r) {
        if (record_instructions_) log_.push_back(r);
    }
    // Is this stream's every instruction logged? (sim/isa/record.hpp builds a record only then.)
    bool logging() const { return record_instructions_; }
    void count_instruction() { ++instructions_; }
    // A block's instruction on pipe `p` over [start, end) in stage `stage` (>= 0), for its
    // item `item` (-1: none).
    void count_stage_busy(int stage, int item, Pipe p, SimTime start, SimTime end) {
        StageBusy& s = stage_busy_[static_cast<std::size_t>(stage)];
        s.start = std::min(s.start, start);
        s.end = std::max(s.end, end);
        s.busy_ps[static_cast<std::size_t>(pipe_index(p))] += end - start;
        if (item >= 0) {
            if (s.items.size() <= static_cast<std::size_t>(item)) s.items.resize(static_cast<std::size_t>(item) + 1, {kNever, 0});
            auto& w = s.items[static_cast<std::size_t>(item)];
            w.first = std::min(w.first, start);
            w.second = std::max(w.second, end);
        }
    }
    // A block's first data-pipe instruction in stage `stage`.
    void count_stage_block(int stage) {
        if (stage_busy_.size() <= static_cast<std::size_t>(stage)) stage_busy_.resize(static_cast<std::size_t>(stage) + 1);
        ++stage_busy_[static_cast<std::size_t>(stage)].blocks;
    }
    void count_remote_bytes(bool load, std::int64_t bytes) { (load ? remote_load_bytes_ : remote_store_bytes_) += bytes; }
    const KernelLaunch& launch() const { return *launch_; }
    // Buffers for evaluating deferred products (functional cube) on whichever thread runs this
    // process's window: one set per stream, not per core, because only one block runs at a time
    // here, and so that a run first-touches a few MiB of them instead of 3 MiB per core.
    WorkScratch& work_scratch() { return work_scratch_; }
    // How many blocks run at once (cores, or clusters for MIX).
    int concurrent_blocks() const { return places_; }
    // "block 3" or, in a MIX kernel, "block 3 AIC" / "block 3 AIV sub-block 1".
    std::string slot_label(int slot) const;

    // ---- cross-core flags (sim/isa/isa_cross_core.cpp) ----
    CrossCoreFlags& cross_core_flags() { return flags_; }
    // A set of `flag` reached `targets`: re-time their waits; a target that has finished and
    // holds more counts than the counter can is an overflow.
    void cross_core_flag_set(const std::vector<int>& targets, int flag);
    // Take one count of `flag` for `blk` at time t if it has arrived by then (true).
    bool cross_core_try_take(BlockCtx& blk, int flag, SimTime t);
    // Suspend `blk` in CrossCoreWaitFlag(flag) issued at `issue`.
    void park_cross_core_wait(BlockCtx& blk, int flag, SimTime issue, std::coroutine_handle<> h);
    // While a sanitized kernel runs, this stream's sanitizer state; else null (one branch per hook).
    StreamSanitizer* sanitizer() { return san_on_; }
    // Before each kernel: does it run sanitized (an API session turns the sanitizer on and off
    // between calls)? The state is made on the first one and kept across kernels.
    StreamSanitizer* sanitize_kernel(bool on);
    // This stream's view of its chip's memory system and of the peers' it touches
    // (sim/mem/memory_view.hpp): every GM transfer of its cores is booked there.
    MemoryView& memory() { return memory_; }
    // Books `bytes` over every link of `route` from `start` on, at most `cap_bytes_per_s`, beside
    // the other streams' usage of those links (sim/net/link_hub.hpp), and notes it to hand in at
    // the window's barrier. Returns when the last byte has crossed.
    SimTime book_route(std::span<const int> route, SimTime start, double bytes, std::int64_t cap_bytes_per_s);
    SimTime window_end() const { return window_end_; }
    // A cluster's port (sim/mem/cluster_port.hpp): an AIV of `cluster` holds `bytes` of it over
    // [begin, end) (noted here for this stream's AIC, handed in at the barrier for the others').
    void note_port_hold(const PortHold& h);
    // What the AIVs of `cluster` held on average over [from, to): this stream's as booked in this
    // window, every stream's of earlier windows as delivered to the chip at the barriers.
    double port_held_bytes(int cluster, SimTime from, SimTime to) const;

    std::vector<std::string> describe_waiters() const override;
    // When blocks of the running kernel were never scheduled (more blocks than cores, the
    // started ones all waiting): a line naming that cause, else empty.
    std::string unschedulable_cause() const;
    void run_window(SimTime window_end) override;

private:
    struct Event {
        SimTime t;
        int block;
        bool operator>(const Event& o) const { return t != o.t ? t > o.t : block > o.block; }
    };

    void start_block(int block, int place, SimTime t);
    void start_part(const BlockPlace& place, CoreState& core, SimTime t);
    // The cores of the running launch (both types for MIX), for its statistics.
    void sum_busy(std::array<SimTime, kPipeCount>& busy) const;
    // (sim/exec/logical_process_flags.cpp) A block waiting in CrossCoreWaitFlag whose turn came
    // at t: takes the count (true: resume it) or becomes a flag waiter.
    bool take_cross_core_count(BlockCtx& blk, SimTime t);
    void add_flag_waiter(BlockCtx& blk);
    // Flag waiters whose count has arrived by flag_wake_ become events at that time.
    void wake_flag_waiters();
    void check_flag_overflow_at_end(const BlockCtx& blk);
    std::string cross_core_deadlock() const;
    std::string describe_flag_wait(const BlockCtx& blk) const;
    // No booking this stream makes from now on starts before the returned time (>= window_floor).
    SimTime booking_horizon(SimTime window_floor);
    void process_until(SimTime end);
    void finish_block(BlockCtx& blk);
    // A TWAIT not satisfied at blk.wait_since: wake it at the first time in this window its
    // condition holds, or leave it to wait for writes delivered at later barriers.
    void begin_wait(BlockCtx& blk);
    void check_waiters();
    // The first time in [blk.wait_since, window end) its TWAIT condition holds, if any.
    std::optional<SimTime> wait_first_true(BlockCtx& blk) const;
    bool wait_satisfied(const BlockCtx& blk, SimTime t) const;
    void resume(BlockCtx& blk);
    std::string where(const BlockCtx& blk) const;
    std::string part_label(const BlockCtx& blk) const;  // slot_label + " on AIV core 7"
    std::string stream_label() const;
    // The memory traffic of this window, to the chips it touched (delivered at the barrier).
    void send_memory_traffic();
    // The links' usage of this window, to their hubs (delivered at the barrier).
    void send_link_traffic();
    // The clusters' port holds of this window, to the chip (delivered at the barrier).
    void send_port_traffic();
    // The kernel ends: statistics, log, leave (running the completion callback).
    void finish_kernel();
    // The run failed: leave without results.
    void abort_kernel();
    // Completes this kernel's deferred writes (sim/isa/deferred_drain.hpp).
    void complete_deferred_writes();

    MachinePort& machine_;
    // Read on the hot path: kept here, not asked of the machine each time.
    const CostModel& cost_;
    const Topology& topology_;
    Coordinator& coord_;
    std::span<const ChipParts> chips_;
    int rank_;
    int stream_id_;
    std::string stream_name_;
    bool record_log_;           // the machine keeps a log: the links' and memory's usage too
    bool record_instructions_;  // ... and this rank's instructions in it

    const KernelLaunch* launch_ = nullptr;
    const CompletionFn* on_complete_ = nullptr;
    // Set under the coordinator's lock when the kernel has left (normally or not).
    bool finished_ = false;
    bool aborted_ = false;
    KernelStats stats_;
    SimTime kernel_start_ = 0;
    std::int64_t instructions_before_ = 0;
    std::int64_t windows_run_ = 0;
    std::array<SimTime, kPipeCount> busy_before_{};
    // The cores that ran a block of the running kernel, with their busy times when its first
    // block started there (KernelStats::cores is the difference at its end); ran_[type][core]
    // is 1 + the entry's index, 0 while the core has run none.
    std::vector<CoreBusy> core_busy_before_;
    std::array<std::vector<int>, 2> ran_;
    std::vector<StageBusy> stage_busy_;  // the running kernel's, by stage id
    bool functional_ = false;
    std::vector<std::unique_ptr<BlockCtx>> blocks_;  // by slot
    int next_block_ = 0;
    int first_live_slot_ = 0;   // slots below it are done (booking_horizon starts here)
    int live_blocks_ = 0;
    StreamCores cores_;              // this stream's own cores (sim/core/stream_cores.hpp)
    int places_ = 0;                 // cores (or clusters) the launch's blocks run on
    std::vector<int> parts_left_;    // MIX: per block, parts still running
    std::vector<int> place_of_;      // MIX: per block, its cluster
    CrossCoreFlags flags_;
    std::vector<int> flag_waiters_;  // slots parked in CrossCoreWaitFlag without an event
    SimTime flag_wake_ = kNever;     // earliest known count time among them
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    // A block parked in TWAIT, with a copy of the memo its last check left in the block
    // (BlockCtx::wait_word, wait_seen_version, wait_quiet_until), so that check_waiters() sees
    // that nothing changed without reading the block: a ring rank's forwarding blocks wait
    // hundreds of windows, and reading each one's BlockCtx every window (a cache miss each) grew
    // with the ranks.
    struct ParkedWait {
        int slot;
        SignalAddr signal;
        const SignalStore* store;  // its chip's
        const SignalWord* word;
        std::uint64_t seen_version;
        SimTime quiet_until;
    };
    // True when wait_first_true(the block) would return nothing without looking at the ops.
    bool still_quiet(const ParkedWait& w) const;
    void copy_memo(ParkedWait& w, const BlockCtx& blk) const;
    std::vector<ParkedWait> waiters_;
    std::vector<std::uint8_t> parked_;  // by slot: 1 while the block is among waiters_
    bool new_waiters_ = false;  // a block started waiting since the last check_waiters()
    // The waiters' signal words, handed to the coordinator at a barrier when they changed
    // since the last one (waiters_changed_).
    std::vector<SignalAddr> watched_;
    bool waiters_changed_ = true;
    std::vector<Message> outbox_;
    std::vector<std::shared_ptr<PendingGmWrite>> deferred_writes_;
    WorkScratch work_scratch_;
    std::uint64_t seq_ = 0;
    SimTime window_end_ = 0;
    SimTime horizon_ = 0;  // booking_horizon() of the current window
    SimTime kernel_end_ = 0;
    SimTime stall_ps_ = 0;
    std::int64_t instructions_ = 0;
    std::int64_t remote_store_bytes_ = 0;
    std::int64_t remote_load_bytes_ = 0;
    std::vector<InstrRecord> log_;
    // While logging: what this kernel published for each chip's memory (by rank), for the trace.
    std::map<int, UsageBins> memory_log_;
    // Hands memory_log_ to the machine in whole bytes per bin, and empties it.
    void hand_in_memory_log();
    MemoryView memory_;
    std::vector<MemoryView::ChipTraffic> traffic_out_;  // send_memory_traffic()'s, kept (emptied, not freed)
    std::unique_ptr<StreamSanitizer> san_;
    StreamSanitizer* san_on_ = nullptr;  // san_ while the running kernel is sanitized
    // This kernel's view of directed link `link_id` (sim/net/link_view.hpp).
    LinkView& link(int link_id);
    std::unordered_map<int, std::unique_ptr<LinkView>> links_;
    std::vector<int> links_used_;  // the links booked in this window, in the order first booked
    // This stream's AIVs' holds of their clusters' ports booked in this window (the earlier ones
    // are the chip's), and the same to hand in (note_port_hold).
    ClusterPortHolds port_holds_;
    std::vector<PortHold> port_out_;
    // book_route()'s buffers, reused.
    struct RouteScratch {
        std::vector<LinkView*> views;
        std::vector<BandwidthCalendar*> path;
        std::vector<UsageSum> others;
        std::vector<const UsageSum*> background;
        std::vector<Breakpoint> rates;
    } route_scratch_;
};

}  // namespace tandem
