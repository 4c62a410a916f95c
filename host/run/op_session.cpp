#include "host/run/op_session.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "kernels/launch_signature.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {

using kernels::OpParams;
using kernels::PhaseRole;
using kernels::RankTensors;
using kernels::ViewKind;
using kernels::ViewPlan;

namespace {
int round_up(int v, int step) { return step <= 1 ? v : (v + step - 1) / step * step; }
}  // namespace

RankTensors allocate_tensors(GlobalMemory& gm, const ShardShapes& sh, const kernels::Padding& pad, const OpParams& p,
                             bool output_in_window) {
    const int esize = dtype_bytes(p.dtype);
    const int k = round_up(sh.b_cols, pad.k);
    const int n_b = round_up(sh.b_rows, pad.n);
    const int out_rows = round_up(sh.out_rows, pad.m);
    const int out_cols = round_up(sh.out_cols, pad.n);
    const int a_rows = round_up(sh.a_rows, pad.m);
    const int a_cols = round_up(sh.a_cols, pad.k);
    RankTensors t;
    const GmAllocation& b = gm.allocate("B", std::int64_t{esize} * k * n_b);
    t.b = GmTensor(b, 0, k, n_b, k, p.dtype, Layout::DN);
    const GmAllocation& c = gm.allocate("C", std::int64_t{dtype_bytes(p.out_dtype)} * out_rows * out_cols, output_in_window);
    t.out = GmTensor(c, 0, out_rows, out_cols, out_cols, p.out_dtype, Layout::ND);
    const GmAllocation& a = gm.allocate("A", std::int64_t{esize} * a_rows * a_cols);
    t.a = GmTensor(a, 0, a_rows, a_cols, a_cols, p.dtype, Layout::ND);
    if (sh.bias_len > 0) {
        const int len = round_up(sh.bias_len, p.bias == kernels::BiasKind::M ? pad.m : pad.n);
        const GmAllocation& bias = gm.allocate("bias", std::int64_t{esize} * len);
        t.bias = GmTensor(bias, 0, 1, len, len, p.dtype, Layout::ND);
    }
    return t;
}

namespace {
// Host elements into the top-left rows x cols of a tensor stored row by row (ND rows, or DN
// columns for B: B_r^T's rows are B's columns).
void write_rows(const GmTensor& t, const HostMatrix& m) {
    if (m.esize != dtype_bytes(t.dtype()))
        throw SimError(fmt::format("internal: {}-byte host elements into {} tensor {}", m.esize, dtype_name(t.dtype()), t.describe()));
    const std::size_t row_bytes = static_cast<std::size_t>(m.cols) * static_cast<std::size_t>(m.esize);
    for (int r = 0; r < m.rows; ++r) {
        std::byte* dst = t.layout() == Layout::ND ? t.element_ptr(r, 0) : t.element_ptr(0, r);
        std::memcpy(dst, m.row(r), row_bytes);
    }
}

void write_inputs_bias(const RankTensors& t, const std::vector<std::byte>& bias) {
    const int esize = dtype_bytes(t.bias.dtype());
    write_rows(t.bias, HostMatrix{1, static_cast<int>(bias.size()) / esize, esize, bias});
}

void write_inputs(const RankTensors& t, const OpInputs& in, int rank) {
    write_rows(t.a, in.a[static_cast<std::size_t>(rank)]);
    write_rows(t.b, in.b_of(rank));
    if (!in.bias.empty()) write_inputs_bias(t, in.bias);
}

}  // namespace

DeviceMatrix read_output(const GmTensor& out, int rows, int cols) {
    GmAllocation& alloc = const_cast<GmAllocation&>(out.allocation());
    if (out.dtype() == DType::F32 && out.rows() == rows && out.cols() == cols && out.offset_bytes() == 0 &&
        alloc.bytes == out.bytes()) {
        return DeviceMatrix{std::move(alloc.data)};
    }
    DeviceMatrix m{ZeroedBuffer(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float))};
    float* dst = reinterpret_cast<float*>(m.bytes.data());
    for (int r = 0; r < rows; ++r) {
        const std::byte* src = out.element_ptr(r, 0);
        float* row = dst + static_cast<std::size_t>(r) * cols;
        if (out.dtype() == DType::F32) {
            std::memcpy(row, src, static_cast<std::size_t>(cols) * sizeof(float));
        } else if (out.dtype() == DType::I8) {  // moe_dispatch's received rows
            const auto* v = reinterpret_cast<const std::int8_t*>(src);
            for (int c = 0; c < cols; ++c) row[c] = static_cast<float>(v[c]);
        } else {
            widen_bits(out.dtype(), reinterpret_cast<const std::uint16_t*>(src), row, static_cast<std::size_t>(cols));
        }
    }
    return m;
}

namespace {
double elapsed_us(SimTime from, SimTime to) { return to_us(to - from); }

// The launches of a view, in the order they go to the streams (phases in order), with what is
// known before they run.
std::vector<KernelFigures> planned_launches(ViewKind kind, const ViewPlan& plan) {
    std::vector<KernelFigures> out;
    for (std::size_t ph = 0; ph < plan.phases.size(); ++ph) {
        for (const kernels::StreamLaunch& l : plan.phases[ph].launches) {
            KernelFigures k;
            k.view = kind;
            k.launch = static_cast<int>(out.size());
            k.phase = static_cast<int>(ph);
            k.stream = l.stream;
            k.kernel = l.kernel.name;
            k.cores = l.kernel.core_type;
            k.blocks = l.kernel.blocks;
            out.push_back(std::move(k));
        }
    }
    return out;
}
}  // namespace

std::vector<std::size_t> kernel_counts(const std::vector<Stream*>& streams) {
    std::vector<std::size_t> counts;
    for (const Stream* s : streams) counts.push_back(s->kernel_stats().size());
    return counts;
}

void add_busy_since(std::array<SimTime, kPipeCount>& busy, const std::vector<Stream*>& streams,
                    const std::vector<std::size_t>& first) {
    for (std::size_t s = 0; s < streams.size(); ++s) {
        const std::vector<KernelStats>& stats = streams[s]->kernel_stats();
        for (std::size_t k = s < first.size() ? first[s] : 0; k < stats.size(); ++k)
            for (int p = 0; p < kPipeCount; ++p) busy[static_cast<std::size_t>(p)] += stats[k].busy_ps[static_cast<std::size_t>(p)];
    }
}

OpSession::OpSession(Cluster& cluster, const ResolvedRun& run) : run_(run) {
    const kernels::VariantDesc& variant = *run_.variant;
    const OpParams& params = run_.params;
    shapes_ = shard_shapes(run_.sharding(), params);
    instance_ = variant.make(params);
    // Comm world init: the op's workspace on every chip, then the host's tensors.
    std::vector<std::size_t> first;
    for (int r = 0; r < params.ranks; ++r) {
        GlobalMemory& gm = cluster.chip(r).gm;
        first.push_back(gm.allocation_count());
        instance_->allocate_workspace(r, gm);
    }
    const kernels::Padding pad = variant.padding ? variant.padding(params) : kernels::Padding{};
    for (int r = 0; r < params.ranks; ++r)
        tensors_.push_back(allocate_tensors(cluster.chip(r).gm, shapes_, pad, params, variant.output_in_window));
    allocations_.resize(static_cast<std::size_t>(params.ranks));
    for (int r = 0; r < params.ranks; ++r) {
        instance_->bind(r, tensors_[static_cast<std::size_t>(r)]);
        const GlobalMemory& gm = cluster.chip(r).gm;
        for (std::size_t i = first[static_cast<std::size_t>(r)]; i < gm.allocation_count(); ++i)
            allocations_[static_cast<std::size_t>(r)].push_back(&gm.allocation_at(i));
    }
}

ViewPlan OpSession::plan(ViewKind kind, int rank) const {
    ViewPlan plan = instance_->view(kind, rank);
    kernels::sign_launches(plan, run_.params);
    return plan;
}

ViewRun OpSession::run_view(HostContext& host, const std::vector<Stream*>& streams, ViewKind kind,
                            const ViewOptions& options) const {
    // A view's kernels' statistics start at these indices on each stream.
    const std::vector<std::size_t> first = kernel_counts(streams);
    ViewPlan plan = this->plan(kind, host.rank());
    const std::vector<KernelFigures> planned = options.figures != nullptr ? planned_launches(kind, plan) : std::vector<KernelFigures>{};
    if (plan.reset) plan.reset(host);
    if (options.at_barrier) host.barrier(options.at_barrier);
    else host.barrier();
    if (options.before_start) options.before_start();
    const bool leave_running = !options.end_events.empty();
    ViewRun run;
    run.start = host.now();
    for (std::size_t p = 0; p < plan.phases.size(); ++p) {
        kernels::ViewPhase& phase = plan.phases[p];
        const SimTime t0 = host.now();
        if (phase.timed_setup) phase.timed_setup(host);
        std::vector<int> used;  // in the order of their first launch
        for (kernels::StreamLaunch& l : phase.launches) {
            Stream* s = streams.at(static_cast<std::size_t>(l.stream));
            l.kernel.timing_only = l.kernel.timing_only || options.timed_only;
            s->launch(std::move(l.kernel));
            if (l.sync_after_launch && !leave_running) s->synchronize();  // a launcher that synchronizes inside
            if (std::find(used.begin(), used.end(), l.stream) == used.end()) used.push_back(l.stream);
        }
        if (leave_running && p + 1 == plan.phases.size()) {
            // Returns at once: the streams record where the view ends.
            for (int s : used) streams[static_cast<std::size_t>(s)]->record(options.end_events[static_cast<std::size_t>(s)]);
            if (options.end_streams != nullptr) *options.end_streams = used;
            break;
        }
        for (int s : used) streams[static_cast<std::size_t>(s)]->synchronize();
        const double us = elapsed_us(t0, host.now());
        if (phase.role == PhaseRole::Comm) run.comm_us += us;
        if (phase.role == PhaseRole::Compute) run.compute_us += us;
    }
    run.end = host.now();
    run.total_us = elapsed_us(run.start, run.end);
    if (options.figures != nullptr) {
        if (leave_running) throw SimError("internal: a view left running has no device figures yet");
        std::vector<std::size_t> next = first;
        for (const KernelFigures& k : planned) {
            const Stream& s = *streams[static_cast<std::size_t>(k.stream)];
            KernelFigures measured = measure_kernel(s.kernel_stats().at(next[static_cast<std::size_t>(k.stream)]++),
                                                   TaskOverheads::of(host.cluster().profile()));
            measured.view = k.view;
            measured.launch = k.launch;
            measured.phase = k.phase;
            measured.stream = k.stream;
            measured.kernel = k.kernel;
            measured.cores = k.cores;
            measured.blocks = k.blocks;
            options.figures->push_back(std::move(measured));
        }
    }
    return run;
}

void OpSession::warm_up(HostContext& host, const std::vector<Stream*>& streams, ViewKind kind, int runs) const {
    ViewOptions warm;
    warm.timed_only = true;
    for (int i = 0; i < runs; ++i) run_view(host, streams, kind, warm);
}

namespace {
// make_op_inputs' values written straight into each rank's tensors (A rows of an ND tensor, B^T
// rows = columns of B's DN tensor; a replicated B generated once and copied to the other ranks),
// and views of them for the host (the golden). The bias stays a host vector (it is small),
// written into every rank's bias tensor.
OpInputs generate_inputs_in_gm(const kernels::Sharding& s, const OpParams& p, const OpSession& session, int host_threads) {
    const ShardShapes& sh = session.shapes();
    OpInputs in;
    in.dtype = p.dtype;
    for (int r = 0; r < p.ranks; ++r) {
        const GmTensor& a = session.tensors(r).a;
        std::byte* at = a.element_ptr(0, 0);
        generate_a(s, p, r, MatrixDest{at, a.ld()}, host_threads);
        in.a.push_back(HostMatrix{sh.a_rows, sh.a_cols, dtype_bytes(p.dtype), {}, at, a.ld()});
    }
    const bool shared_b = s.b == kernels::Split::Replicated;
    for (int r = 0; r < p.ranks; ++r) {
        const GmTensor& b = session.tensors(r).b;  // DN: B^T's row j is column j
        std::byte* bt = b.element_ptr(0, 0);
        if (shared_b && r > 0) {
            const GmTensor& first = session.tensors(0).b;
            for (int j = 0; j < sh.b_rows; ++j)
                std::memcpy(b.element_ptr(0, j), first.element_ptr(0, j),
                            static_cast<std::size_t>(sh.b_cols) * static_cast<std::size_t>(dtype_bytes(p.dtype)));
            continue;
        }
        generate_b_t(s, p, r, MatrixDest{bt, b.ld()}, host_threads);
        in.b_t.push_back(HostMatrix{sh.b_rows, sh.b_cols, dtype_bytes(p.dtype), {}, bt, b.ld()});
    }
    in.bias = generate_bias(s, p);
    if (!in.bias.empty())
        for (int r = 0; r < p.ranks; ++r) write_inputs_bias(session.tensors(r), in.bias);
    return in;
}

// Joins a thread when the scope ends (before the cluster whose memory it reads goes).
struct JoinAtExit {
    std::thread& t;
    ~JoinAtExit() {
        if (t.joinable()) t.join();
    }
};

// Host inputs copied in (`inputs`), generated in place (`beside`), or neither (timing-only).
ViewsOutcome run_op_views_impl(const Profile& profile, const ResolvedRun& run, const OpInputs* inputs,
                               const std::function<void(const OpInputs&)>* beside, const ViewLog& log, int host_threads,
                               const ProgressSink& progress);

}  // namespace

ViewsOutcome run_op_views(const Profile& profile, const ResolvedRun& run, const OpInputs* inputs, const ViewLog& log,
                          int host_threads, const ProgressSink& progress) {
    return run_op_views_impl(profile, run, inputs, nullptr, log, host_threads, progress);
}

ViewsOutcome run_op_views_in_place(const Profile& profile, const ResolvedRun& run,
                                   const std::function<void(const OpInputs&)>& beside, const ViewLog& log,
                                   int host_threads, const ProgressSink& progress) {
    return run_op_views_impl(profile, run, nullptr, &beside, log, host_threads, progress);
}

namespace {
// Rank `r`'s figures of the pipelined view, collected once its views ran on `streams`:
// what its kernels moved across the interconnect, the pipes' busy time and the cube kernels' stalls.
void collect_pipelined(ViewsOutcome& out, int r, const std::vector<Stream*>& streams, const std::vector<std::size_t>& first) {
    RankViewTimes& times = out.per_rank[static_cast<std::size_t>(r)];
    add_busy_since(out.pipelined_busy_ps[r], streams, first);
    std::vector<std::size_t> next = first;
    for (const KernelFigures& k : times.kernels) {
        if (k.view != ViewKind::Pipelined) continue;
        const KernelStats& stats = streams[static_cast<std::size_t>(k.stream)]->kernel_stats().at(next[static_cast<std::size_t>(k.stream)]++);
        times.remote_load_bytes += stats.remote_load_bytes;
        times.remote_store_bytes += stats.remote_store_bytes;
        // Summed in integer picoseconds: the order the rank threads finish in cannot matter.
        if (k.cores == CoreType::AIC) out.compute_twait_stall_ps += stats.twait_stall_ps;
    }
    for (const Stream* s : streams)
        for (const KernelStats& k : s->kernel_stats()) out.instructions += k.instructions;
}

ViewsOutcome run_op_views_impl(const Profile& profile, const ResolvedRun& run, const OpInputs* inputs,
                               const std::function<void(const OpInputs&)>* beside, const ViewLog& log, int host_threads,
                               const ProgressSink& progress) {
    const OpParams& params = run.params;
    const bool sanitize = run.request.sanitize;
    const bool functional = inputs != nullptr || beside != nullptr;
    ClusterOptions options;
    options.ranks = params.ranks;
    options.data_mode = functional ? DataMode::Functional : DataMode::TimingOnly;
    options.record_log = log.keep;
    options.log_ranks = log.ranks;
    options.sanitize = sanitize;
    options.host_threads = host_threads;
    Runtime rt(profile, options);
    Cluster& cluster = rt.cluster();
    // Reports until the views are done (stopped before the cluster goes).
    ProgressReporter reporter(progress, cluster.coordinator());

    const OpSession session(cluster, run);
    const std::shared_ptr<kernels::OpInstance>& instance = session.instance();
    if (inputs != nullptr)
        for (int r = 0; r < params.ranks; ++r) write_inputs(session.tensors(r), *inputs, r);
    // Inputs generated in place: `beside` runs on them on its own thread while the views run,
    // and is joined before the cluster (and its memory) goes, also when the run fails.
    OpInputs in_gm;
    std::thread beside_thread;
    std::exception_ptr beside_error;
    const JoinAtExit join_beside{beside_thread};
    if (beside != nullptr) {
        in_gm = generate_inputs_in_gm(run.sharding(), params, session, host_threads);
        beside_thread = std::thread([&] {
            try {
                (*beside)(in_gm);
            } catch (...) {
                beside_error = std::current_exception();
            }
        });
    }

    ViewsOutcome out;
    out.stream_names = instance->streams();
    out.stage_names = instance->stage_names();
    out.per_rank.resize(static_cast<std::size_t>(params.ranks));
    out.pipelined_start = kNever;
    std::mutex stats_mu;
    try {
    rt.run_hosts([&](HostContext& host) {
        const int r = host.rank();
        RankViewTimes& times = out.per_rank[static_cast<std::size_t>(r)];
        std::vector<Stream*> streams;
        for (const std::string& name : out.stream_names) streams.push_back(&host.create_stream(name));

        // The first two views are only timed (see op_session.hpp).
        const int warmups = run.request.warmup_runs;
        // Rank 0 tells the progress report where the views are (every rank is in step).
        const auto enter = [&](ViewKind kind, bool warm_up) {
            if (r == 0 && (!warm_up || warmups > 0)) reporter.enter(kind, warm_up, host.now());
        };
        ViewOptions timed;
        timed.timed_only = true;
        timed.figures = &times.kernels;
        enter(ViewKind::ComputeOnly, true);
        session.warm_up(host, streams, ViewKind::ComputeOnly, warmups);
        enter(ViewKind::ComputeOnly, false);
        times.compute_only_us = session.run_view(host, streams, ViewKind::ComputeOnly, timed).total_us;
        enter(ViewKind::Sequential, true);
        session.warm_up(host, streams, ViewKind::Sequential, warmups);
        enter(ViewKind::Sequential, false);
        const ViewRun sequential = session.run_view(host, streams, ViewKind::Sequential, timed);
        times.seq_comm_us = sequential.comm_us;
        times.seq_compute_us = sequential.compute_us;

        // Its warm-ups launch timing-only (they move no data), before the output is cleared and
        // before the view's statistics and log start.
        enter(ViewKind::Pipelined, true);
        session.warm_up(host, streams, ViewKind::Pipelined, warmups);
        enter(ViewKind::Pipelined, false);
        // Cleared before the view's barrier, so that the barrier orders the clear before every
        // peer's pipelined kernel that writes this output (after the barrier it would race them:
        // the sanitizer reports it). A peer's sequential-view kernel may still run here, but that
        // view is timing-only and moves no data.
        if (functional) host.zero_device(session.tensors(r).out);
        const std::vector<std::size_t> first = kernel_counts(streams);
        ViewOptions piped;
        piped.figures = &times.kernels;
        // Keep only the pipelined view's log: cleared once every rank's earlier views have
        // handed theirs in (a peer may still be finishing its sequential view when this rank
        // gets here), and before any rank launches the view.
        if (log.keep) piped.before_start = [&] { host.barrier([&] { cluster.clear_log(); }); };
        const ViewRun pipelined = session.run_view(host, streams, ViewKind::Pipelined, piped);
        times.pipelined_us = pipelined.total_us;
        host.barrier();

        std::lock_guard lock(stats_mu);
        out.pipelined_start = std::min(out.pipelined_start, pipelined.start);
        out.pipelined_end = std::max(out.pipelined_end, pipelined.end);
        collect_pipelined(out, r, streams, first);
    });
    } catch (const SimError& e) {
        if (!sanitize) throw;
        // The error joins the sanitizer's report, with whatever else it found before it.
        cluster.sanitizer()->add_violation(classify_run_error(e.what()));
        const auto& found = cluster.sanitizer()->check();
        throw SanitizerFailure(format_sanitizer_report(found, cluster.sanitizer()->total_violations()));
    }
    if (Sanitizer* san = cluster.sanitizer()) {
        out.sanitizer_violations = san->check();
        out.sanitizer_total = san->total_violations();
    }
    out.windows = cluster.coordinator().windows();
    if (log.keep) {
        out.pipelined_log = cluster.event_log();
        out.pipelined_link_usage = cluster.link_usage();
        out.pipelined_memory_usage = cluster.memory_usage();
        out.trace_machine = trace_machine(cluster.cost(), cluster.topology(), out.pipelined_link_usage);
    }
    for (const RankViewTimes& t : out.per_rank) {
        out.slowest.compute_only_us = std::max(out.slowest.compute_only_us, t.compute_only_us);
        // The sequential view's slowest rank, its comm and compute parts: the parts' maxima come
        // from different ranks when the ranks are unbalanced (MoE routing), and their sum would
        // be a sequential time no rank took (a variant that is the baseline would read faster).
        if (t.seq_comm_us + t.seq_compute_us > out.slowest.seq_comm_us + out.slowest.seq_compute_us) {
            out.slowest.seq_comm_us = t.seq_comm_us;
            out.slowest.seq_compute_us = t.seq_compute_us;
        }
        out.slowest.pipelined_us = std::max(out.slowest.pipelined_us, t.pipelined_us);
    }
    const ShardShapes& shapes = session.shapes();
    for (int r = 0; r < params.ranks; ++r) {
        if (functional) out.out.push_back(read_output(session.tensors(r).out, shapes.out_rows, shapes.out_cols));
        out.out_base.push_back(session.tensors(r).out.address());
    }
    if (beside_thread.joinable()) beside_thread.join();
    if (beside_error) std::rethrow_exception(beside_error);
    out.signal_name = [instance](int rank, std::int64_t address) { return instance->signal_name(rank, address); };
    return out;
}
}  // namespace

}  // namespace tandem::host
