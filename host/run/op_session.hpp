#pragma once
// An op on a simulated cluster: its instance, its workspace and the host's tensors on every rank,
// and its views run on a rank's host thread. Every surface runs an op through it: the command
// line (run_op_views: one session per run, the three views as the seeds' host programs time
// them) and the API (api/op_call.cpp: one session per workspace, reused across calls, which
// keeps only the handles, the workspace's reuse and async calls).
//
// The three views, as the seeds' host programs time them: per rank (one host thread each),
// compute-only, sequential and pipelined, each started from a host barrier and timed on the
// rank's simulated host clock (launch and synchronize included). Only the pipelined view moves
// and computes data in a functional run (the others are timed only: timing never depends on
// data), so a functional run costs one op, not three.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "host/run/kernel_figures.hpp"
#include "host/run/op_inputs.hpp"
#include "host/run/run_progress.hpp"
#include "host/ops/op_facade.hpp"
#include "kernels/op_desc.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/mem/zeroed_buffer.hpp"
#include "sim/profile.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/trace/chrome_trace.hpp"

namespace tandem::host {

// The host's tensors of one rank, padded as the variant asks: B (stored transposed), the
// output, A and the bias, allocated (after the op's workspace) in that order.
kernels::RankTensors allocate_tensors(GlobalMemory& gm, const ShardShapes& sh, const kernels::Padding& pad,
                                      const kernels::OpParams& p, bool output_in_window);

// A rank's output as fp32, out_rows x out_cols, row-major (the device's bytes handed over when
// they already are that, converted otherwise).
struct DeviceMatrix {
    ZeroedBuffer bytes;
    const float* data() const { return reinterpret_cast<const float*>(bytes.data()); }
    std::span<const float> floats() const { return {data(), bytes.size() / sizeof(float)}; }
};

// The logical rows x cols of a rank's output as fp32. A whole, unpadded fp32 output is handed
// over without a copy (its allocation's bytes are moved out: the caller discards the cluster).
DeviceMatrix read_output(const GmTensor& out, int rows, int cols);

// One view on one rank: the host clock at its start and end and the phases' times by role.
struct ViewRun {
    double comm_us = 0;
    double compute_us = 0;
    double total_us = 0;
    SimTime start = 0;
    SimTime end = 0;
};

// How a rank runs one view (OpSession::run_view).
struct ViewOptions {
    bool timed_only = false;                 // launch every kernel timing-only
    std::function<void()> at_barrier;        // run once at the view's start barrier, every rank there
    std::function<void()> before_start;      // after the barrier, before the clock starts
    // Each launch's device figures, in launch order (the view's launches must be synchronized).
    std::vector<KernelFigures>* figures = nullptr;
    // Not empty (one per stream): the view's last phase is left running (an async call) and each
    // stream it launched on records its end into end_events[stream]; *end_streams gets those
    // streams. A launcher
    // that synchronizes inside (StreamLaunch::sync_after_launch) does not then.
    std::span<Event> end_events;
    std::vector<int>* end_streams = nullptr;
};

// Each stream's kernel count (Stream::kernel_stats) now: what runs after it is a view's.
std::vector<std::size_t> kernel_counts(const std::vector<Stream*>& streams);

// Adds to `busy` what `streams` ran from kernel first[s] on (kernel_counts; 0 where `first` has
// no entry): a view's or a trace's busy totals.
void add_busy_since(std::array<SimTime, kPipeCount>& busy, const std::vector<Stream*>& streams,
                    const std::vector<std::size_t>& first);

class OpSession {
public:
    // The op's instance, then on every rank of `cluster` its workspace and the host's tensors,
    // bound to it.
    OpSession(Cluster& cluster, const ResolvedRun& run);

    const ResolvedRun& run() const { return run_; }
    const kernels::OpParams& params() const { return run_.params; }
    const ShardShapes& shapes() const { return shapes_; }
    const std::shared_ptr<kernels::OpInstance>& instance() const { return instance_; }
    const kernels::RankTensors& tensors(int rank) const { return tensors_.at(static_cast<std::size_t>(rank)); }
    // Everything the session allocated on a rank's GM (the workspace, then the tensors).
    const std::vector<const GmAllocation*>& allocations(int rank) const { return allocations_.at(static_cast<std::size_t>(rank)); }

    // A view's plan on a rank, every launch signed (under sanitize, ranks launching different
    // shapes are reported).
    kernels::ViewPlan plan(kernels::ViewKind kind, int rank) const;

    // One view on a rank's streams (the op's, in OpInstance::streams order): its untimed reset,
    // a host barrier, then the timed phases, each launched and then synchronized.
    ViewRun run_view(HostContext& host, const std::vector<Stream*>& streams, kernels::ViewKind kind,
                     const ViewOptions& options = {}) const;

    // A view run `runs` times before it is timed, as a host's warm-up iterations (RunRequest::
    // warmup_runs): timing-only launches whose times and figures are not kept. What they leave is
    // the machine's state, the chip's L2 above all; the host clock moves on past them.
    void warm_up(HostContext& host, const std::vector<Stream*>& streams, kernels::ViewKind kind, int runs) const;

private:
    ResolvedRun run_;
    ShardShapes shapes_;
    std::shared_ptr<kernels::OpInstance> instance_;
    std::vector<kernels::RankTensors> tensors_;
    std::vector<std::vector<const GmAllocation*>> allocations_;
};

// ------------------------------------------------------------------ the command line's run --

struct RankViewTimes {
    double compute_only_us = 0;
    double seq_comm_us = 0;
    double seq_compute_us = 0;
    double pipelined_us = 0;
    // Bytes the rank's kernels of the pipelined view moved across the interconnect (KernelStats):
    // loaded from peers' windows, stored (plain or atomic-add) into them.
    std::int64_t remote_load_bytes = 0;
    std::int64_t remote_store_bytes = 0;
    // Every launch of the three views, in order (view, then launch): device time and pipe use.
    std::vector<KernelFigures> kernels;
};

struct ViewsOutcome {
    std::vector<RankViewTimes> per_rank;
    RankViewTimes slowest;                   // each view's time on the slowest rank
    std::vector<DeviceMatrix> out;           // functional: every rank's output
    std::int64_t instructions = 0;           // simulated instructions over all views
    std::uint64_t windows = 0;               // coordinator windows over all views
    SimTime compute_twait_stall_ps = 0;      // pipelined view, cube kernels, summed over ranks and blocks
    std::vector<std::string> stream_names;   // by stream id
    std::vector<std::string> stage_names;    // by stage id (OpInstance::stage_names)
    std::vector<InstrRecord> pipelined_log;  // with a ViewLog kept: the pipelined view's instructions
    SimTime pipelined_start = 0;             // earliest host clock at the pipelined view's start
    SimTime pipelined_end = 0;               // latest host clock at its end
    std::map<int, std::array<SimTime, kPipeCount>> pipelined_busy_ps;  // per rank, every kernel of the view
    std::map<int, std::vector<std::pair<SimTime, std::int64_t>>> pipelined_link_usage;  // when logged
    std::map<int, std::vector<MemBinBytes>> pipelined_memory_usage;  // when logged: each chip's L2 and HBM bytes per bin
    TraceMachine trace_machine;              // when logged: what a trace needs of the run's machine
    std::function<std::string(int, std::int64_t)> signal_name;  // the op's names for signal words
    // --sanitize: what the sanitizer found (empty: clean).
    std::vector<SanViolation> sanitizer_violations;
    std::size_t sanitizer_total = 0;
    std::vector<std::int64_t> out_base;      // each rank's output address (to tell its stores in the log)
};

// What to keep of the pipelined view (ViewsOutcome::pipelined_log and its links' and memory's usage).
struct ViewLog {
    bool keep = false;
    std::vector<int> ranks;  // keep only these ranks' instructions (empty: every rank's); a trace
                             // of some ranks (--trace-ranks) needs no more
};

// The three views of a resolved run (host/ops/op_facade.hpp) on a cluster of its own, each after
// its RunRequest::warmup_runs warm-ups (OpSession::warm_up). `inputs` is null in timing-only mode. `log`: what to keep of the pipelined view.
// `host_threads`: the host threads the machine may keep busy (ClusterOptions::host_threads; 0: every core).
// `progress`: where to report how far the views have got while they run (host/run/run_progress.hpp).
ViewsOutcome run_op_views(const Profile& profile, const ResolvedRun& run, const OpInputs* inputs,
                          const ViewLog& log = {}, int host_threads = 0, const ProgressSink& progress = {});

// Functional, with the inputs generated straight into each rank's GM (make_op_inputs' values,
// no host copy of them): `beside` gets views of them there (OpInputs of HostMatrix views, valid
// only during the call) and runs on its own thread beside the views (the program's golden);
// the call returns when both are done, rethrowing what `beside` threw. Nothing that runs may
// write the A and B tensors (no op does: they are the kernels' read-only inputs).
ViewsOutcome run_op_views_in_place(const Profile& profile, const ResolvedRun& run,
                                   const std::function<void(const OpInputs&)>& beside, const ViewLog& log = {},
                                   int host_threads = 0, const ProgressSink& progress = {});

}  // namespace tandem::host
