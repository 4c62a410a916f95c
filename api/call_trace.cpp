#include "api/call_trace.hpp"

#include <fmt/format.h>

#include "host/run/results.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/sim_error.hpp"

namespace tandem::api::detail {

namespace {

std::string field_in(const char* field, ParamWords words) {
    return words == ParamWords::Python ? fmt::format("config['{}']", field) : fmt::format("OpConfig::{}", field);
}

host::Verification verification_of(const std::string& v) {
    if (v == "passed") return host::Verification::Passed;
    if (v == "failed") return host::Verification::Failed;
    return host::Verification::Skipped;
}

// The figures a call without all_views did not measure (the other views and what is derived
// from them): left out of the trace's identity rather than written as zeros.
constexpr const char* kOtherViewKeys[] = {"compute_only_us", "seq_comm_us",     "seq_compute_us",    "sequential_us",
                                          "speedup",         "overlap_eff_pct", "exposed_comm_us",   "time_saved_us",
                                          "time_saved_pct",  "ideal_bound_us",  "seq_comm_gib_s",    "tflops_compute_only",
                                          "tflops_sequential"};

// The results JSON's keys of the call (host/run/results.hpp), and what only a call has.
nlohmann::json call_metadata(const CallTraceInput& in, const Profile& profile) {
    host::RunResults r;
    r.id = host::make_identity(*in.run);
    const OpResults& res = *in.results;
    r.times.pipelined_us = res.pipelined_us;
    r.times.compute_only_us = res.compute_only_us.value_or(0);
    r.times.seq_comm_us = res.seq_comm_us.value_or(0);
    r.times.seq_compute_us = res.seq_compute_us.value_or(0);
    r.verification = verification_of(res.verification);
    nlohmann::json j = host::to_json(r);
    if (!in.all_views) {
        for (const char* key : kOtherViewKeys) j.erase(key);
    }
    j["source"] = "api call";
    j["per_rank_us"] = res.per_rank_us;
    if (!in.calls.empty()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& [c, lane] : in.calls) {
            calls.push_back({{"op", c.op}, {"variant", c.variant}, {"start_us", c.start_us}, {"end_us", c.end_us},
                             {"pipelined_us", c.pipelined_us}, {"lane", lane}});
        }
        j["calls"] = calls;
    }
    j["profile_file"] = profile.file.string();
    j["aic_cores"] = profile.chip.aic_cores;
    j["aiv_cores"] = profile.chip.aiv_cores;
    return j;
}

}  // namespace

CallLog::CallLog(Cluster& cluster, const std::vector<int>& ranks) : cluster_(cluster) {
    cluster_.clear_log();
    cluster_.set_logging(true, ranks);
}

CallLog::~CallLog() {
    cluster_.set_logging(false);
    cluster_.clear_log();
}

void check_trace_request(const std::string& op, const OpConfig& config, bool calls_pending,
                         const std::string& open_trace_op, int ranks, ParamWords words) {
    if (config.trace.empty()) {
        if (!config.trace_ranks.empty() || config.trace_window_us) {
            throw SimError(fmt::format("{}: {} and {} limit a trace: give {} (the file to write) too", op,
                                       field_in("trace_ranks", words), field_in("trace_window_us", words),
                                       field_in("trace", words)));
        }
        return;
    }
    // The cluster keeps one log: one trace at a time, and a trace starts with its call.
    if (!open_trace_op.empty()) {
        throw SimError(fmt::format("{}: {} = '{}': the trace of an async {} call is open until barrier(), which "
                                   "writes it; call barrier() first",
                                   op, field_in("trace", words), config.trace, open_trace_op));
    }
    if (calls_pending) {
        throw SimError(fmt::format("{}: {} = '{}': async calls are pending and would run inside the trace; call "
                                   "barrier() first",
                                   op, field_in("trace", words), config.trace));
    }
    for (int r : config.trace_ranks) {
        if (r < 0 || r >= ranks) {
            throw SimError(fmt::format("{}: {} names rank {}; the context has {} ranks (0..{})", op,
                                       field_in("trace_ranks", words), r, ranks, ranks - 1));
        }
    }
    const auto& w = config.trace_window_us;
    if (w && (w->first < 0 || w->second <= w->first)) {
        throw SimError(fmt::format("{}: {} = {}:{}: START >= 0 and END > START, in microseconds from the call's start", op,
                                   field_in("trace_window_us", words), config.trace_window_us->first,
                                   config.trace_window_us->second));
    }
}

void write_call_trace(const Cluster& cluster, const OpConfig& config, const CallTraceInput& in) {
    const std::vector<InstrRecord> log = cluster.event_log();
    TraceInput t;
    t.log = &log;
    t.stream_names = in.stream_names;
    t.stream_lanes = in.stream_lanes;
    t.stage_names = in.stage_names;
    t.view_start = in.start;
    t.view_end = in.end;
    t.busy_ps = in.busy_ps;
    t.link_usage = cluster.link_usage();
    t.memory_usage = cluster.memory_usage();
    t.memory_bin_ps = kMemUsageBinPs;
    t.machine = trace_machine(cluster.cost(), cluster.topology(), t.link_usage);
    t.metadata = call_metadata(in, cluster.profile());
    t.signal_name = in.signal_name;
    write_chrome_trace(config.trace, t, TraceFilter{config.trace_ranks, config.trace_window_us});
}

}  // namespace tandem::api::detail
