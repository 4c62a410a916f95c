#pragma once
// A logical process: one stream of one rank while it runs a kernel. It owns the kernel's blocks
// (coroutines), puts them on the cores of its type (more blocks than cores run in waves: the
// first core to free takes the next block), and runs them in simulated-time order: an event
// queue keyed by (time, block), never by host arrival. Blocks run ahead freely through
// core-local instructions; an instruction that touches anything shared (GM bandwidth, a link,
// a signal) waits until it is the earliest thing left in this process and inside the window the
// coordinator has opened. Everything another stream can observe leaves as a timestamped message.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/pipe.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/exec/coordinator.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/exec/message.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/net/bandwidth_calendar.hpp"

namespace tandem {

class Cluster;

using KernelFn = std::function<Task(BlockCtx&)>;

struct KernelLaunch {
    std::string name;
    CoreType core_type = CoreType::AIC;
    int blocks = 1;
    KernelFn fn;
    // In a functional cluster, run this launch for its timing only: no data moved or computed.
    // For launches whose results nobody reads (a benchmark view that is only timed); timing never
    // depends on data, so its times are the same either way.
    bool timing_only = false;
};

struct KernelStats {
    SimTime start = 0;
    SimTime end = 0;            // last block done on its core
    std::int64_t instructions = 0;
    SimTime twait_stall_ps = 0; // summed over blocks
    std::array<SimTime, kPipeCount> busy_ps{};  // per pipe, summed over the kernel's cores
    std::int64_t windows_run = 0;  // coordinator windows this stream was woken for (host cost)
};

class LogicalProcess : public Participant {
public:
    LogicalProcess(Cluster& cluster, int rank, int stream_id, std::string stream_name);
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
    Cluster& cluster() { return cluster_; }
    const Cluster& cluster() const { return cluster_; }
    int source_id() const;
    // Does the running kernel move and compute data? (functional cluster, launch not timing-only)
    bool data_effects() const { return data_effects_; }

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
        if (record_log_) log_.push_back(r);
    }
    bool logging() const { return record_log_; }
    void count_instruction() { ++instructions_; }
    BandwidthCalendar& fabric() { return *fabric_; }
    BandwidthCalendar& link(int link_id);
    SimTime window_end() const { return window_end_; }

    std::vector<std::string> describe_waiters() const override;
    void run_window(SimTime window_end) override;

private:
    struct Event {
        SimTime t;
        int block;
        bool operator>(const Event& o) const { return t != o.t ? t > o.t : block > o.block; }
    };

    void start_block(int block, CoreState& core, SimTime t);
    void process_until(SimTime end);
    void finish_block(BlockCtx& blk);
    void check_waiters();
    bool wait_satisfied(const BlockCtx& blk, SimTime t) const;
    void resume(BlockCtx& blk);
    std::string where(const BlockCtx& blk) const;
    std::string stream_label() const;
    // The kernel ends: statistics, log, leave (running the completion callback).
    void finish_kernel();
    // The run failed: leave without results.
    void abort_kernel();
    // Completes this kernel's deferred writes (sim/isa/deferred_drain.hpp).
    void complete_deferred_writes();

    Cluster& cluster_;
    int rank_;
    int stream_id_;
    std::string stream_name_;
    bool record_log_;

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
    bool data_effects_ = false;
    std::vector<std::unique_ptr<BlockCtx>> blocks_;
    int next_block_ = 0;
    int live_blocks_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::vector<int> waiters_;
    bool new_waiters_ = false;  // a block started waiting since the last check_waiters()
    std::vector<SignalAddr> watched_;  // the waiters' signal words, handed in at each barrier
    std::vector<Message> outbox_;
    std::vector<std::shared_ptr<PendingGmWrite>> deferred_writes_;
    std::uint64_t seq_ = 0;
    SimTime window_end_ = 0;
    SimTime kernel_end_ = 0;
    SimTime stall_ps_ = 0;
    std::int64_t instructions_ = 0;
    std::vector<InstrRecord> log_;
    std::unique_ptr<BandwidthCalendar> fabric_;
    std::unordered_map<int, std::unique_ptr<BandwidthCalendar>> links_;
};

}  // namespace tandem
