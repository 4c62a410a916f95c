// One call of an op through the API, and the barrier that completes async calls.
//
// A call: the shape comes from the tensors (M, K, N through the op's sharding), the rest from
// OpConfig; the whole is resolved by the ops facade (host/ops/op_facade.hpp), as the command line
// is, so a call gets the same one-line messages, naming the parameters in the caller's words. The workspace holds the op's OpInstance (its windows
// and flags) and padded staging tensors the kernels read and write: the caller's tensors are
// copied in (B transposed into the N x K layout both Ascend kernels keep) and the output copied
// out, untimed, as the seeds' hosts copy inputs in and outputs out between iterations.
//
// Stale flags on reuse: every call runs the variant's untimed host reset of its pipelined view
// (ViewPlan::reset: flags and counters to zero, slices placed) on every rank and then a host
// barrier before any kernel starts, so no kernel of the call can see a flag value of an earlier
// call: the reset is the versioning (a host reset before the timed region, as the seeds and
// Iris's fixed benchmark do between iterations). An async call's workspace cannot be reused
// before barrier(), so the reset never races a kernel still reading the flags.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "api/call_trace.hpp"
#include "api/context_state.hpp"
#include "host/run/op_session.hpp"
#include "host/run/verify.hpp"
#include "api/config_fields.hpp"
#include "host/ops/op_facade.hpp"
#include "host/ops/shard_shapes.hpp"
#include "host/params/param_values.hpp"
#include "host/params/param_words.hpp"
#include "kernels/param_error.hpp"
#include "kernels/launch_signature.hpp"
#include "kernels/registry.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "sim/sim_error.hpp"

namespace tandem::api::detail {

namespace {

using kernels::Split;

std::string shape_of(const TensorState& t) { return fmt::format("{} x {} {}", t.rows, t.cols, dtype_name(t.dtype)); }

void check_shape(const std::string& op, const char* what, const TensorState& t, int rows, int cols, const std::string& why) {
    if (t.rows != rows || t.cols != cols) {
        throw SimError(fmt::format("{}: {} is {} per rank; this call needs {} x {} ({})", op, what, shape_of(t), rows, cols, why));
    }
}

// A refusal of the facade in the caller's words (host/params/param_words.hpp).
host::Dialect dialect_of(const ContextOptions& o) {
    return o.words == ParamWords::Python ? host::Dialect::Python : host::Dialect::Cpp;
}

// The request the call stands for: M, K, N, dtypes and bias read off the tensors through the op's
// sharding, the rest from OpConfig through the parameter schema (api/config_fields.hpp).
host::RunRequest request_of(const ContextState& ctx, const std::string& op_name, const TensorState& out,
                            const TensorState& a, const TensorState& b, const TensorState* bias, const OpConfig& c) {
    const host::Dialect words = dialect_of(ctx.options);
    host::RunRequest r;
    r.op = op_name;
    r.op_desc = &ctx.find_op(op_name);  // a user's op is in no registry: the facade resolves it from here
    for (const ConfigField& f : config_fields()) {
        const host::ParamDesc& p = host::param_desc(f.param);
        if (p.scope != host::ParamScope::Run) continue;
        const std::optional<std::string> given = f.given(c);
        if (!given) continue;
        try {
            host::set_param(r, f.param, *given);
        } catch (const SimError& e) {
            throw SimError(fmt::format("{}: {}: {}", op_name, host::param_name_in(p.name, words), e.what()));
        }
    }
    r.knobs = c.knobs;
    const kernels::Sharding& s = r.op_desc->sharding_of(host::variant_of(r));
    const int w = ctx.options.ranks;
    if (a.dtype != b.dtype) {
        throw SimError(fmt::format("{}: A is {} and B is {}: A, B and bias share one dtype", op_name, dtype_name(a.dtype),
                                   dtype_name(b.dtype)));
    }
    r.dtype = to_sim(a.dtype);
    r.out_dtype = to_sim(out.dtype);
    // M, K, N from A (per rank) and the output, through the op's sharding. An output shaped like
    // A, or of the op's own shape (Sharding::out_shape, moe_dispatch's received rows), has A's M.
    r.m = s.out_like_a ? a.rows : out.rows;
    // An output shaped like A (Sharding::out_like_a) says nothing of N: B (K x N) gives it.
    r.n = s.out_like_a ? b.cols : (s.out == Split::Cols ? out.cols * w : out.cols);
    const int k_total = s.a == Split::Cols ? a.cols * w : a.cols;
    r.k = s.k_per_rank ? (k_total % w == 0 ? k_total / w : k_total) : k_total;
    r.ranks = w;
    if (bias != nullptr) {
        if (bias->dtype != a.dtype) {
            throw SimError(fmt::format("{}: bias is {} and A is {}: A, B and bias share one dtype", op_name,
                                       dtype_name(bias->dtype), dtype_name(a.dtype)));
        }
        // A row vector adds per column (1 x N), a column vector per row (M x 1); 1 x M is also read
        // as per row when it cannot be per column (M != N), as Iris's per-column default allows.
        const bool per_column = bias->rows == 1 && bias->cols == r.n;
        const bool per_row = (bias->cols == 1 && bias->rows == r.m) || (bias->rows == 1 && bias->cols == r.m);
        if (!per_column && !per_row) {
            throw SimError(fmt::format("{}: bias is {} per rank; it must be 1 x N ({}) or M x 1 ({})", op_name,
                                       shape_of(*bias), r.n, r.m));
        }
        // The (M x 1 or 1 x M) buffer holds M contiguous values either way.
        r.bias = per_column ? kernels::BiasKind::N : kernels::BiasKind::M;
    }
    r.timing_only = !ctx.options.functional;
    r.soc = ctx.profile.name;
    return r;
}

// The call resolved by the ops facade (the command line's checks and messages, in the caller's
// words), its tensors checked against the shapes the sharding gives.
host::ResolvedRun resolve_call(const ContextState& ctx, const std::string& op_name, const TensorState& out,
                               const TensorState& a, const TensorState& b, const TensorState* bias, const OpConfig& c) {
    host::ResolvedRun run;
    try {
        run = host::resolve_run(request_of(ctx, op_name, out, a, b, bias, c), ctx.profile);
    } catch (const kernels::ParamError& e) {
        throw SimError(fmt::format("{}: {}", op_name, host::message_in(e, dialect_of(ctx.options))));
    }
    // The tensors against the shapes the sharding gives (resolving passed: M, K, N are sound).
    const host::ShardShapes sh = host::shard_shapes(run.sharding(), run.params);
    const host::RunRequest& r = run.request;
    const std::string split = fmt::format("M={} K={} N={} over {} ranks", r.m, r.k, r.n, r.ranks);
    // M (and for some ops N) is read off the output: a wrong output shape shows as a wrong A.
    const char* out_word = dialect_of(ctx.options) == host::Dialect::Python ? "output_tensor" : "the output";
    check_shape(op_name, "A", a, sh.a_rows, sh.a_cols,
                fmt::format("{}; M is read off {}, {} per rank", split, out_word, shape_of(out)));
    check_shape(op_name, "B", b, sh.b_cols, sh.b_rows, split + "; B is K x N");
    check_shape(op_name, "the output", out, sh.out_rows, sh.out_cols, split);
    return run;
}

// What a workspace was made for: a call with another signature needs another workspace.
std::string signature_of(const host::ResolvedRun& run) {
    const host::RunRequest& c = run.request;
    std::string knobs;
    for (const auto& [k, v] : c.knobs) knobs += fmt::format(" {}={}", k, v);
    return fmt::format("{} ({}, {}) M={} K={} N={} {}->{} bias={} base {}x{} blocks {}/{} {}{}", c.op, c.variant, c.schedule,
                       c.m, c.k, c.n, tandem::dtype_name(c.dtype), tandem::dtype_name(run.params.out_dtype),
                       kernels::bias_name(c.bias), c.base_m, c.base_n, c.compute_blocks.value_or(0),
                       c.comm_blocks.value_or(0), c.comm_mode, knobs);
}

// dst(r, c) = src(r, c) for r < rows, c < cols where exactly one of the two is DN (so element
// (r, c) is at r * ld + c on the ND side and at c * ld + r on the DN side).
template <typename Element>
void transpose_block(const GmTensor& dst, const GmTensor& src, int rows, int cols) {
    constexpr int kBlock = 64;
    const bool src_nd = src.layout() == Layout::ND;
    auto* d = reinterpret_cast<Element*>(dst.element_ptr(0, 0));
    const auto* s = reinterpret_cast<const Element*>(src.element_ptr(0, 0));
    const std::int64_t sld = src.ld();
    const std::int64_t dld = dst.ld();
    for (int r0 = 0; r0 < rows; r0 += kBlock) {
        const int r1 = std::min(rows, r0 + kBlock);
        for (int c0 = 0; c0 < cols; c0 += kBlock) {
            const int c1 = std::min(cols, c0 + kBlock);
            for (int r = r0; r < r1; ++r) {
                for (int c = c0; c < c1; ++c) {
                    const std::int64_t si = src_nd ? r * sld + c : c * sld + r;
                    const std::int64_t di = src_nd ? c * dld + r : r * dld + c;
                    std::memcpy(d + di, s + si, sizeof(Element));  // no aliasing assumptions on GM bytes
                }
            }
        }
    }
}

// Host copy of a rows x cols block between two tensors of this rank, element by element order
// of the destination's storage (B goes into its N x K "DN" layout this way). No simulated time.
void copy_block(const GmTensor& dst, const GmTensor& src, int rows, int cols) {
    gm_before_read(src.allocation(), GmSpan::of(src));
    gm_before_write(dst.allocation(), GmSpan::of(dst));
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(src.dtype()));
    if (dst.layout() == src.layout()) {
        for (int r = 0; r < rows; ++r) std::memcpy(dst.element_ptr(r, 0), src.element_ptr(r, 0), esize * static_cast<std::size_t>(cols));
        return;
    }
    // ND <-> DN (B: K x N row-major into the N x K "DN" staging): a transpose, in square blocks
    // so both sides stay in cache, on raw pointers (an element_ptr call and a memcpy per element
    // made this copy ~7% of a 2 x 2048 x 2048 x 1024 call: api_overhead_bench).
    if (esize == 1) transpose_block<std::uint8_t>(dst, src, rows, cols);
    else if (esize == 2) transpose_block<std::uint16_t>(dst, src, rows, cols);
    else transpose_block<std::uint32_t>(dst, src, rows, cols);
}

// The workspace a call runs in: the given one if it fits (same context, op, signature, nothing
// pending), else a new one with the op's session on the context's cluster.
std::shared_ptr<WorkspaceState> workspace_for(ContextState& ctx, const std::shared_ptr<ContextState>& self,
                                              const std::string& op_name, const host::ResolvedRun& run,
                                              std::shared_ptr<WorkspaceState> ws) {
    const std::string signature = signature_of(run);
    if (ws) {
        if (ws->ctx.get() != &ctx) throw SimError(fmt::format("{}: the workspace belongs to another context", op_name));
        if (ws->op != op_name) {
            throw SimError(fmt::format("{}: the workspace was made for {}, not {} (workspace: {})", op_name, ws->op, op_name,
                                       ws->signature));
        }
        if (ws->signature != signature) {
            throw SimError(fmt::format("{}: the workspace was made for another shape or configuration: it holds {}; this "
                                       "call needs {}",
                                       op_name, ws->signature, signature));
        }
        if (ws->pending) throw SimError(fmt::format("{}: the workspace has a pending async call; call barrier() first", op_name));
        return ws;
    }
    ctx.park_if_pending();
    ws = std::make_shared<WorkspaceState>();
    ws->ctx = self;
    ws->op = op_name;
    ws->variant = run.request.variant;
    ws->signature = signature;
    ws->own_math = run.op->own_math ? &*run.op->own_math : nullptr;
    ws->session = std::make_unique<host::OpSession>(ctx.runtime->cluster(), run);
    return ws;
}

// A call whose kernels go into the open trace: its lane (its stream set's) and its name there.
void join_open_trace(OpenTrace& t, const std::string& op_name, const std::shared_ptr<WorkspaceState>& ws, int set_id) {
    auto lane = std::find_if(t.lanes.begin(), t.lanes.end(), [&](const OpenTrace::Lane& l) { return l.set == set_id; });
    if (lane == t.lanes.end()) lane = t.lanes.insert(t.lanes.end(), OpenTrace::Lane{set_id, {}});
    lane->calls.push_back(fmt::format("{}[{}]", op_name, t.calls.size() + 1));
    t.calls.push_back(OpenTrace::Call{ws, static_cast<int>(lane - t.lanes.begin()) + 1, std::nullopt});
}

// A completed synchronous call's trace (OpConfig::trace): its kernels as the cluster logged them,
// and each rank's streams' busy time since the pipelined launch (`first_stat`).
void write_sync_trace(Cluster& cluster, const std::string& op_name, const host::ResolvedRun& run, const OpConfig& config,
                      const WorkspaceState& w, const StreamSet& set, const std::vector<std::vector<std::size_t>>& first_stat,
                      SimTime start, SimTime end) {
    const host::OpSession& session = *w.session;
    CallTraceInput in;
    in.run = &run;
    in.results = &w.results;
    in.all_views = config.all_views;
    in.stage_names = session.instance()->stage_names();
    in.start = start;
    in.end = end;
    const std::vector<std::string> names = session.instance()->streams();
    for (std::size_t r = 0; r < set.per_rank.size(); ++r) {
        const std::vector<Stream*>& streams = set.per_rank[r];
        for (std::size_t s = 0; s < streams.size(); ++s) {
            const std::size_t id = static_cast<std::size_t>(streams[s]->id());
            if (in.stream_names.size() <= id) in.stream_names.resize(id + 1, "stream");
            in.stream_names[id] = names[s];  // the op's name for it (the stream's own ends in "#<set>")
        }
        host::add_busy_since(in.busy_ps[static_cast<int>(r)], streams, first_stat[r]);
    }
    const std::shared_ptr<kernels::OpInstance> instance = session.instance();
    in.signal_name = [instance](int rank, std::int64_t address) { return instance->signal_name(rank, address); };
    try {
        write_call_trace(cluster, config, in);
    } catch (const SimError& e) {
        throw SimError(fmt::format("{}: {}", op_name, e.what()));
    }
}

// One call's host program on every rank (ContextState::run): the timed views with all_views,
// the caller's tensors copied in, the pipelined view (left running for an async call), the output
// copied out; what each rank hands back.
struct CallRanks {
    ContextState& ctx;
    WorkspaceState& w;
    const StreamSet& set;
    const OpConfig& config;
    bool async_op;
    bool tracing;
    const TensorState& out;
    const TensorState& a;
    const TensorState& b;
    const TensorState* bias;
    // Per rank.
    std::vector<host::ViewRun> compute_only = std::vector<host::ViewRun>(set.per_rank.size());
    std::vector<host::ViewRun> sequential = std::vector<host::ViewRun>(set.per_rank.size());
    std::vector<SimTime> start = std::vector<SimTime>(set.per_rank.size());
    std::vector<SimTime> end = std::vector<SimTime>(set.per_rank.size());
    std::vector<std::vector<std::size_t>> first_stat = std::vector<std::vector<std::size_t>>(set.per_rank.size());
    std::vector<int> used{};  // the pipelined view's last phase's streams (same on every rank)
    std::mutex used_mu{};

    void run_rank(HostContext& host);
    // With all_views: each timed view's time on the slowest rank.
    void add_slowest_views(OpResults& res) const {
        double co = 0, sc = 0, sp = 0;
        for (std::size_t r = 0; r < set.per_rank.size(); ++r) {
            co = std::max(co, compute_only[r].total_us);
            // The sequential view's slowest rank and its two parts (as the command line's).
            if (sequential[r].comm_us + sequential[r].compute_us > sc + sp) {
                sc = sequential[r].comm_us;
                sp = sequential[r].compute_us;
            }
        }
        res.compute_only_us = co;
        res.seq_comm_us = sc;
        res.seq_compute_us = sp;
    }
};

void CallRanks::run_rank(HostContext& host) {
    const int r = host.rank();
    const std::size_t ri = static_cast<std::size_t>(r);
    const host::OpSession& session = *w.session;
    const host::ShardShapes& sh = session.shapes();
    const std::vector<Stream*>& streams = set.per_rank[ri];
    const kernels::RankTensors& st = session.tensors(r);
    if (config.all_views) {  // timed only, as the command line's first two views
        host::ViewOptions timed;
        timed.timed_only = true;
        session.warm_up(host, streams, kernels::ViewKind::ComputeOnly, config.warmup_runs);
        compute_only[ri] = session.run_view(host, streams, kernels::ViewKind::ComputeOnly, timed);
        session.warm_up(host, streams, kernels::ViewKind::Sequential, config.warmup_runs);
        sequential[ri] = session.run_view(host, streams, kernels::ViewKind::Sequential, timed);
    }
    session.warm_up(host, streams, kernels::ViewKind::Pipelined, config.warmup_runs);
    if (ctx.options.functional) {
        copy_block(st.a, a.on(r), sh.a_rows, sh.a_cols);
        // B is K x N row-major; the staging B is N x K stored "DN": element (k, n) either way.
        const GmTensor b_in = b.on(r);
        copy_block(st.b, b_in, sh.b_cols, sh.b_rows);
        if (bias != nullptr) copy_block(st.bias, bias->on(r), 1, sh.bias_len);
        host.zero_device(st.out);
    }
    host::ViewOptions piped;
    // A traced call with all_views or warm-ups logs its pipelined launch only: the log is cleared
    // once every rank's earlier launches handed theirs in, before any rank launches (as the
    // command line does).
    if (tracing && (config.all_views || config.warmup_runs > 0)) piped.at_barrier = [this] { ctx.runtime->cluster().clear_log(); };
    piped.before_start = [&] {
        first_stat[ri] = host::kernel_counts(streams);
        if (tracing && async_op) {  // each rank its own entries; no other call is running
            OpenTrace& t = *ctx.open_trace;
            for (std::size_t s = 0; s < t.first_stat.size(); ++s) t.first_stat[s][ri] = host::kernel_counts(ctx.stream_sets[s].per_rank[ri]);
        }
    };
    std::vector<int> left_running;
    if (async_op) {  // returns at once: the streams record where the op ends; barrier() waits for it
        piped.end_events = std::span<Event>(w.end_events).subspan(ri * streams.size(), streams.size());
        piped.end_streams = &left_running;
    }
    const host::ViewRun pipelined = session.run_view(host, streams, kernels::ViewKind::Pipelined, piped);
    start[ri] = pipelined.start;
    if (async_op) {
        std::lock_guard lock(used_mu);
        used = left_running;
        return;
    }
    end[ri] = pipelined.end;
    if (ctx.options.functional) copy_block(out.on(r), st.out, sh.out_rows, sh.out_cols);
    host.barrier();  // async_op=false ends with a barrier
}

}  // namespace

Workspace ContextState::run(const std::shared_ptr<ContextState>& self, const std::string& op_name, Tensor& out_t,
                            const Tensor& a_t, const Tensor& b_t, const Tensor* bias_t, bool async_op, const OpConfig& config,
                            Workspace workspace) {
    check_usable();
    for (const Tensor* t : std::initializer_list<const Tensor*>{&out_t, &a_t, &b_t, bias_t}) {
        if (t == nullptr) continue;
        if (!t->state_) throw SimError(fmt::format("{}: an empty tensor handle was passed", op_name));
        if (t->state_->ctx.get() != this) throw SimError(fmt::format("{}: a tensor of another context was passed", op_name));
    }
    const TensorState& out = *out_t.state_;
    const TensorState& a = *a_t.state_;
    const TensorState& b = *b_t.state_;
    const TensorState* bias = bias_t != nullptr ? bias_t->state_.get() : nullptr;
    for (const auto& w : pending) {
        if (w->pending_out == out_t.state_)
            throw SimError(fmt::format("{}: the output is still being written by a pending async {} call; call barrier() first",
                                       op_name, w->op));
    }
    const host::ResolvedRun run = resolve_call(*this, op_name, out, a, b, bias, config);
    check_trace_request(op_name, config, !pending.empty(), open_trace ? open_trace->call->op : std::string(),
                        options.ranks, options.words);
    set_sanitizing(op_name, config.sanitize);

    std::shared_ptr<WorkspaceState> ws = workspace_for(*this, self, op_name, run, workspace.state_);

    const int set_id = acquire_streams(ws->session->instance()->streams());
    StreamSet& set = stream_sets[static_cast<std::size_t>(set_id)];
    set.busy = true;
    ws->calls += 1;
    ws->results = OpResults{};
    ws->results.op = op_name;
    ws->results.variant = run.request.variant;
    ws->results.knobs = run.effective_knobs();
    ws->results.base_m = run.params.base_m;
    ws->results.base_n = run.params.base_n;
    const int ranks = options.ranks;
    ws->end_events.assign(static_cast<std::size_t>(ranks) * set.per_rank.front().size(), Event{});
    WorkspaceState& w = *ws;
    // A traced call: the cluster logs its kernels (with all_views, those of the two timed views
    // too, cleared before the pipelined launch as the command line does); each rank's streams'
    // statistics from the pipelined launch on are its busy times. An async call's trace stays
    // open until barrier(): every stream set's statistics count from its pipelined launch on.
    const bool tracing = !config.trace.empty();
    std::optional<CallLog> call_log;
    if (tracing && !async_op) call_log.emplace(runtime->cluster(), config.trace_ranks);
    if (tracing && async_op) {
        OpenTrace& t = open_trace.emplace();
        t.config = config;
        t.run = run;
        t.call = ws;
        t.log = std::make_unique<CallLog>(runtime->cluster(), config.trace_ranks);
        t.first_stat.assign(stream_sets.size(), std::vector<std::vector<std::size_t>>(static_cast<std::size_t>(ranks)));
    }
    if (open_trace) join_open_trace(*open_trace, op_name, ws, set_id);

    CallRanks call{*this, w, set, config, async_op, tracing, out, a, b, bias};
    try {
        runtime->run_hosts([&](HostContext& host) { call.run_rank(host); }, Runtime::AfterProgram::KeepClocks);
    } catch (const std::exception& e) {
        broken = e.what();
        open_trace.reset();  // its log off: nothing more runs on this cluster
        fail_sanitized(op_name, e.what());
        throw;
    }

    OpResults& res = w.results;
    const std::vector<SimTime>& start = call.start;
    const std::vector<SimTime>& end = call.end;
    res.per_rank_us.assign(static_cast<std::size_t>(ranks), 0.0);
    res.start_us = to_us(*std::min_element(start.begin(), start.end()));
    if (config.all_views) call.add_slowest_views(res);
    if (async_op) {
        w.pending = true;
        w.stream_set = set_id;
        w.pending_out = out_t.state_;
        w.start_ps = start;
        w.used_streams = call.used;
        pending.push_back(ws);
    } else {
        SimTime last = 0;
        for (int r = 0; r < ranks; ++r) {
            const double us = to_us(end[static_cast<std::size_t>(r)] - start[static_cast<std::size_t>(r)]);
            res.per_rank_us[static_cast<std::size_t>(r)] = us;
            res.pipelined_us = std::max(res.pipelined_us, us);
            last = std::max(last, end[static_cast<std::size_t>(r)]);
        }
        res.end_us = to_us(last);
        res.complete = true;
        w.add_figures();
        set.busy = false;
        if (options.functional) w.verify_own_math(ranks);
        if (open_trace) {  // a synchronous call inside an async call's open trace (its last call)
            open_trace->calls.back().done = res;
            open_trace->end = std::max(open_trace->end, last);
        }
        if (tracing)
            write_sync_trace(runtime->cluster(), op_name, run, config, w, set, call.first_stat,
                             *std::min_element(start.begin(), start.end()), last);
    }
    check_sanitized(op_name);
    Workspace handle;
    handle.state_ = ws;
    return handle;
}

void WorkspaceState::verify_own_math(int ranks) {
    if (own_math == nullptr) return;
    const kernels::OpParams& params = session->params();
    const host::ShardShapes& shapes = session->shapes();
    const host::Tolerance tol = host::own_math_tolerance(*own_math, params.out_dtype);
    std::vector<host::RankVerification> found;
    bool passed = true;
    std::vector<kernels::OwnMathInput> xs;
    for (int r = 0; r < ranks; ++r) {
        const GmTensor& a = session->tensors(r).a;
        xs.push_back(kernels::OwnMathInput{reinterpret_cast<const std::uint16_t*>(a.element_ptr(0, 0)), a.ld(), a.rows(), a.cols(),
                                           a.dtype()});
    }
    for (int r = 0; r < ranks; ++r) {
        const host::DeviceMatrix actual = host::read_output(session->tensors(r).out, shapes.out_rows, shapes.out_cols);
        found.push_back(host::verify_rank(r, actual.data(), own_math->golden(params, r, xs), tol));
        passed = passed && found.back().passed;
    }
    results.verification = passed ? "passed" : "failed";
    results.verification_report = passed ? "" : host::describe_failures(found, shapes.out_cols) + "  (rule: " + tol.describe() + ")";
}

void ContextState::barrier() {
    check_usable();
    std::vector<std::shared_ptr<WorkspaceState>> calls = std::move(pending);
    pending.clear();
    auto program = [&](HostContext& host) {
        const int r = host.rank();
        for (const auto& w : calls) {
            const StreamSet& set = stream_sets[static_cast<std::size_t>(w->stream_set)];
            for (int s : w->used_streams) set.per_rank[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)]->synchronize();
            if (options.functional) {
                const host::ShardShapes& sh = w->session->shapes();
                copy_block(w->pending_out->on(r), w->session->tensors(r).out, sh.out_rows, sh.out_cols);
            }
        }
        host.barrier();
    };
    try {
        runtime->run_hosts(program, Runtime::AfterProgram::KeepClocks);
    } catch (const std::exception& e) {
        broken = e.what();
        open_trace.reset();
        fail_sanitized("barrier", e.what());
        throw;
    }
    for (const auto& w : calls) {
        OpResults& res = w->results;
        const std::size_t per = stream_sets[static_cast<std::size_t>(w->stream_set)].per_rank.front().size();
        SimTime last = 0;
        for (int r = 0; r < options.ranks; ++r) {
            SimTime e = w->start_ps[static_cast<std::size_t>(r)];
            for (int s : w->used_streams) e = std::max(e, w->end_events[static_cast<std::size_t>(r) * per + static_cast<std::size_t>(s)].time());
            const double us = to_us(e - w->start_ps[static_cast<std::size_t>(r)]);
            res.per_rank_us[static_cast<std::size_t>(r)] = us;
            res.pipelined_us = std::max(res.pipelined_us, us);
            last = std::max(last, e);
        }
        res.end_us = to_us(last);
        res.complete = true;
        w->add_figures();
        if (options.functional) w->verify_own_math(options.ranks);
        w->pending = false;
        w->pending_out.reset();
        stream_sets[static_cast<std::size_t>(w->stream_set)].busy = false;
        w->stream_set = -1;
        if (open_trace) open_trace->end = std::max(open_trace->end, last);
    }
    if (open_trace) close_open_trace();
    check_sanitized("barrier");
}

// ---------------------------------------------------------------------------- sanitize --

namespace {
// The count and the first violation in full (the whole report: the command line's --sanitize).
std::string sanitizer_message(const std::string& what, const std::vector<SanViolation>& found, std::size_t total) {
    return fmt::format("{}: sanitize found {} violation{}, the first:\n{}", what, total, total == 1 ? "" : "s",
                       found.front().text);
}
}  // namespace

void ContextState::set_sanitizing(const std::string& op, bool on) {
    Cluster& cluster = runtime->cluster();
    const bool was = cluster.sanitizer() != nullptr;
    if (on == was) return;
    // The kernels of a pending call run as they were launched; a check needs every call since
    // the last one to have been sanitized or not as a whole.
    if (!pending.empty()) {
        throw SimError(fmt::format("{}: sanitize={} while {} async call{} launched with sanitize={} {} pending; call "
                                   "barrier() first",
                                   op, on, pending.size(), pending.size() == 1 ? "" : "s", was,
                                   pending.size() == 1 ? "is" : "are"));
    }
    cluster.set_sanitizing(on);
}

void ContextState::check_sanitized(const std::string& what) {
    Sanitizer* san = runtime->cluster().sanitizer();
    if (san == nullptr || !pending.empty()) return;
    const std::vector<SanViolation> found = san->check();
    if (!found.empty()) throw SanitizerFailure(sanitizer_message(what, found, san->total_violations()));
}

void ContextState::fail_sanitized(const std::string& what, const std::string& error) {
    Sanitizer* san = runtime->cluster().sanitizer();
    if (san == nullptr) return;
    // The run error joins the report, with whatever else the sanitizer found before it.
    san->add_violation(classify_run_error(error));
    const std::vector<SanViolation> found = san->check();
    throw SanitizerFailure(sanitizer_message(what, found, san->total_violations()));
}

}  // namespace tandem::api::detail
