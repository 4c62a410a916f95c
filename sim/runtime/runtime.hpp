#pragma once
// The host side, in the spirit of ACL/HCCL: one host program per rank (a host thread, as the
// seed runs one MPI process per rank), streams with a host thread each that takes their queued
// launches in order (asynchronous launch, events, synchronize; a running kernel's windows are
// run by the coordinator's pool, see sim/exec/coordinator.hpp), kernel launch with a block count
// on AIC or AIV cores, and a host barrier. Host threads keep a simulated clock; launch and synchronize cost profile time.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/exec/logical_process.hpp"
#include "sim/mem/gm_tensor.hpp"
#include "sim/machine/cluster.hpp"

namespace tandem {

class HostContext;

// A point in a stream's work whose simulated time is known once the stream has reached it.
class Event {
public:
    bool reached() const { return reached_; }
    SimTime time() const { return time_; }

private:
    friend class Stream;
    bool reached_ = false;
    SimTime time_ = 0;
};

class Stream {
public:
    Stream(HostContext& host, int stream_id, std::string name);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // Queue a kernel; returns at once (the host pays the launch cost on its clock).
    void launch(KernelLaunch kernel);
    // Queue an event record: its time is the stream's time when every earlier command is done.
    void record(Event& event);
    // Block the host until every queued command is done.
    void synchronize();

    const std::string& name() const { return name_; }
    int id() const { return id_; }
    // The coordinator bound this stream holds while a kernel is queued and not yet running.
    int bound_id() const { return bound_id_; }
    // Statistics of the kernels this stream ran, in launch order (read after synchronize()).
    const std::vector<KernelStats>& kernel_stats() const { return stats_; }
    void clear_stats() { stats_.clear(); }

private:
    struct Command {
        std::optional<KernelLaunch> kernel;
        SimTime ready_at = 0;
        Event* event = nullptr;
        std::shared_ptr<const VectorClock> host_clock;  // --sanitize: what the host knew at the launch
        std::uint64_t host_call = 0;                    // --sanitize: the host's call at the launch
    };
    void thread_main();
    // While a kernel waits in the queue, the earliest time it can start bounds the windows.
    void refresh_bound_locked();
    // The command at the queue's head is done at `end` (called with the coordinator's lock held).
    void complete_locked(SimTime end);

    HostContext& host_;
    int id_;
    std::string name_;
    LogicalProcess lp_;
    int bound_id_;
    // Guarded by the coordinator's lock:
    std::deque<Command> queue_;
    bool busy_ = false;
    bool shutdown_ = false;
    bool waiting_host_ = false;
    SimTime tail_ = 0;  // simulated time at which the stream's last command finished
    std::size_t launches_ = 0;  // kernels launched so far (the host thread's; --sanitize compares signatures by it)
    std::vector<KernelStats> stats_;
    std::thread thread_;
};

class Runtime;

class HostContext {
public:
    HostContext(Runtime& rt, int rank);
    ~HostContext();

    int rank() const { return rank_; }
    int ranks() const;
    Cluster& cluster();
    Runtime& runtime() { return rt_; }
    SimTime now() const;  // this host's simulated clock

    Stream& create_stream(const std::string& name);
    // aclrtMalloc: memory in this rank's GM (capacity-checked).
    GmAllocation& malloc(const std::string& name, std::int64_t bytes);
    // aclrtMemcpy / aclrtMemset between views, outside any timed region: host-side copies of
    // device memory that cost no simulated time (the seeds' hosts re-copy inputs and clear
    // outputs between iterations). Both tensors on this rank, same shape and dtype, ND. No-ops
    // in timing-only mode. Must not run while a kernel of this rank may touch the memory.
    void copy_device(const GmTensor& dst, const GmTensor& src);
    void zero_device(const GmTensor& dst);
    // Host write of `count` consecutive signal words on this rank (all set to `value`), visible
    // after the host-write latency.
    void write_signals(std::int64_t address, int count, std::int32_t value);
    // HCCL-style barrier across every rank's host. `on_release` (if any) runs once, on the host
    // that arrives last, while every host waits in the barrier: after each rank's past, before
    // anything a rank does next (a traced run clears the log of the views before it so).
    void barrier(const std::function<void()>& on_release = {});

private:
    friend class Stream;
    friend class Runtime;
    void finish();
    // The program returned (KeepClocks): the clock still bounds the windows, but no longer holds
    // them (sim/exec/coordinator.hpp).
    void stop_acting();
    // --sanitize: the host thread's release (a launch, a signal write), and its record of a
    // host access to device memory.
    std::shared_ptr<const VectorClock> san_release();
    void san_access(SanAccess::Kind kind, const GmTensor& t, const char* what);
    ThreadKey san_key() const { return thread_key(rank_, kHostStream, 0); }

    Runtime& rt_;
    int rank_;
    int host_id_;
    SimTime now_ = 0;  // guarded by the coordinator's lock
    std::uint64_t message_seq_ = 0;
    std::vector<std::unique_ptr<Stream>> streams_;
    // --sanitize: the host thread's vector clock (guarded by the coordinator's lock).
    VectorClock san_vc_;
    std::uint32_t san_clock_ = 1;
    std::uint64_t san_seq_ = 0;
    // --sanitize: this host's call, the programs started plus the barriers passed (the same count
    // on every rank): a flag written in an earlier call that satisfies a wait is stale.
    std::uint64_t san_call_ = 0;
};

class Runtime {
public:
    Runtime(const Profile& profile, const ClusterOptions& options);
    ~Runtime();

    Cluster& cluster() { return cluster_; }
    int ranks() const { return cluster_.ranks(); }
    HostContext& host(int rank) { return *hosts_.at(static_cast<std::size_t>(rank)); }

    // What the hosts' clocks do once run_hosts returns.
    enum class AfterProgram {
        Finish,     // the hosts are done: they bound nothing, queued kernels run to completion
        KeepClocks  // the hosts will act again (an API session): each host's clock keeps bounding
                    // the windows, so kernels left running cannot pass a time at which a later
                    // program may still launch or write (see sim/exec/coordinator.hpp)
    };

    // Runs `program` once per rank, each on its own host thread, and waits for all. Throws
    // SimError with the run's first error if any rank or kernel failed. Host clocks persist
    // across calls (a later call starts each host at its clock).
    void run_hosts(const std::function<void(HostContext&)>& program, AfterProgram after = AfterProgram::Finish);

    // Waits until no kernel can run before a host acts (every running kernel waits at a window
    // barrier the hosts' clocks hold back, and no queued kernel is about to start): between
    // run_hosts(..., KeepClocks) calls, host-side bookkeeping that kernels also read (GM
    // allocations) may then change without racing them. Throws SimError if the run failed.
    void wait_until_parked();

private:
    friend class HostContext;
    Cluster cluster_;
    std::vector<std::unique_ptr<HostContext>> hosts_;
    // Host barrier state (guarded by the coordinator's lock).
    int barrier_arrived_ = 0;
    SimTime barrier_max_ = 0;
    SimTime barrier_release_ = 0;
    std::uint64_t barrier_generation_ = 0;
    VectorClock barrier_vc_;        // --sanitize: joined clocks of the hosts arrived so far
    VectorClock barrier_released_;  // ... of the last barrier released
};

}  // namespace tandem
