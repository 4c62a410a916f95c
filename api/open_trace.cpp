// The trace of an async call (OpConfig::trace with async_op), open from the call until the
// barrier() that completes it: this writes it. What it holds is everything launched meanwhile,
// so it is built from every stream set's statistics since the traced call's launch and from
// every call made inside it (api/op_call.cpp opens it and keeps it up to date).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/call_trace.hpp"
#include "api/context_state.hpp"
#include "sim/sim_error.hpp"

namespace tandem::api::detail {

void ContextState::close_open_trace() {
    const OpenTrace t = std::move(*open_trace);  // its log (on until `t` goes) is dropped however this ends
    open_trace.reset();
    const WorkspaceState& traced = *t.call;
    CallTraceInput in;
    in.run = &t.run;
    in.results = &traced.results;
    in.all_views = t.config.all_views;
    in.stage_names = traced.session->instance()->stage_names();
    in.start = *std::min_element(traced.start_ps.begin(), traced.start_ps.end());
    in.end = t.end;
    // Each lane's streams: its own tracks, named after its calls ("allgather_gemm[2] compute"),
    // except the traced call's alone on its lane, named as a synchronous call's trace names them.
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
        const OpenTrace::Lane& lane = t.lanes[l];
        const std::string prefix = l == 0 && lane.calls.size() == 1 ? "" : fmt::format("{} ", fmt::join(lane.calls, "/"));
        for (int r = 0; r < options.ranks; ++r) {
            for (const Stream* st : stream_sets[static_cast<std::size_t>(lane.set)].per_rank[static_cast<std::size_t>(r)]) {
                const std::size_t id = static_cast<std::size_t>(st->id());
                if (in.stream_names.size() <= id) in.stream_names.resize(id + 1, "stream");
                if (in.stream_lanes.size() <= id) in.stream_lanes.resize(id + 1, 1);
                const std::string& own = st->name();  // "<the op's name for it>#<set>"
                in.stream_names[id] = prefix + own.substr(0, own.rfind('#'));
                in.stream_lanes[id] = static_cast<int>(l) + 1;
            }
        }
    }
    // The calls in it, the traced one first (it started the trace), then by their start.
    for (const OpenTrace::Call& c : t.calls) in.calls.emplace_back(c.done ? *c.done : c.ws->results, c.lane);
    std::stable_sort(in.calls.begin() + 1, in.calls.end(),
                     [](const auto& a, const auto& b) { return a.first.start_us < b.first.start_us; });
    const std::vector<std::size_t> none;  // a set made after the trace opened: all it ran
    for (std::size_t s = 0; s < stream_sets.size(); ++s) {
        for (int r = 0; r < options.ranks; ++r) {
            host::add_busy_since(in.busy_ps[r], stream_sets[s].per_rank[static_cast<std::size_t>(r)],
                           s < t.first_stat.size() ? t.first_stat[s][static_cast<std::size_t>(r)] : none);
        }
    }
    std::vector<std::shared_ptr<kernels::OpInstance>> instances;  // every call's: the first that names a signal
    for (const OpenTrace::Call& c : t.calls) instances.push_back(c.ws->session->instance());
    in.signal_name = [instances = std::move(instances)](int rank, std::int64_t address) {
        for (const auto& i : instances) {
            std::string name = i->signal_name(rank, address);
            if (!name.empty()) return name;
        }
        return std::string();
    };
    try {
        write_call_trace(runtime->cluster(), t.config, in);
    } catch (const SimError& e) {
        throw SimError(fmt::format("barrier: {}: {}", traced.op, e.what()));
    }
}

}  // namespace tandem::api::detail
