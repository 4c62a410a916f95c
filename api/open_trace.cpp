// The trace of an async call (OpConfig::trace with async_op), open from the call until the
// barrier() that completes it: this writes it. What it holds is everything launched meanwhile,
// so it is built from every stream set's statistics since the traced call's launch and from
// every call made inside it (api/op_call.cpp opens it and keeps it up to date).
#include <algorithm>

#include <fmt/format.h>

#include "api/call_trace.hpp"
#include "api/context_state.hpp"
#include "sim/sim_error.hpp"

namespace tandem::api::detail {

void ContextState::close_open_trace(const std::vector<std::shared_ptr<WorkspaceState>>& completed) {
    const OpenTrace t = std::move(*open_trace);  // its log (on until `t` goes) is dropped however this ends
    open_trace.reset();
    const WorkspaceState& traced = *t.call;
    CallTraceInput in;
    in.run = &t.run;
    in.results = &traced.results;
    in.all_views = t.config.all_views;
    in.stage_names = traced.instance->stage_names();
    in.start = *std::min_element(traced.start_ps.begin(), traced.start_ps.end());
    in.end = t.end;
    in.stream_names = t.stream_names;
    in.stream_calls = t.stream_calls;
    // The calls in it by their start, the traced one first (it started the trace).
    in.calls = t.done;
    for (const auto& w : completed) {
        if (w != t.call) in.calls.push_back(w->results);
    }
    std::stable_sort(in.calls.begin(), in.calls.end(),
                     [](const OpResults& a, const OpResults& b) { return a.start_us < b.start_us; });
    in.calls.insert(in.calls.begin(), traced.results);
    for (std::size_t s = 0; s < stream_sets.size(); ++s) {
        for (int r = 0; r < options.ranks; ++r) {
            const std::vector<Stream*>& streams = stream_sets[s].per_rank[static_cast<std::size_t>(r)];
            const std::vector<std::size_t>* first =
                s < t.first_stat.size() ? &t.first_stat[s][static_cast<std::size_t>(r)] : nullptr;
            auto& busy = in.busy_ps[r];
            for (std::size_t k = 0; k < streams.size(); ++k) {
                const std::vector<KernelStats>& stats = streams[k]->kernel_stats();
                for (std::size_t i = first != nullptr && k < first->size() ? (*first)[k] : 0; i < stats.size(); ++i)
                    for (int p = 0; p < kPipeCount; ++p) busy[static_cast<std::size_t>(p)] += stats[i].busy_ps[static_cast<std::size_t>(p)];
            }
        }
    }
    in.signal_name = [instances = t.instances](int rank, std::int64_t address) {
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
