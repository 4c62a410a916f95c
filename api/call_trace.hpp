#pragma once
// A traced call of the API (OpConfig::trace): the cluster logs the call's kernels, and the call
// writes what the command line's --trace writes (sim/trace/chrome_trace.hpp, docs/TRACE.md),
// with the call's identity in place of a run's, so prof_analysis/report.py reads either. A
// synchronous call writes it as it returns; an async call's trace stays open until barrier()
// and holds every kernel launched meanwhile (the calls it overlapped: the metadata's "calls").
#include <array>
#include <map>
#include <string>
#include <vector>

#include "host/ops/op_facade.hpp"
#include "sim/core/pipe.hpp"
#include "sim/machine/cluster.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/trace/chrome_trace.hpp"
#include "tandem/tandem.hpp"

namespace tandem::api::detail {

// While it lives, the cluster logs what is launched (only `ranks`' instructions when given);
// the log is dropped when it goes, also when the call fails. Made while no kernel runs.
class CallLog {
public:
    CallLog(Cluster& cluster, const std::vector<int>& ranks);
    ~CallLog();
    CallLog(const CallLog&) = delete;
    CallLog& operator=(const CallLog&) = delete;

private:
    Cluster& cluster_;
};

// What the call knows that the cluster's log does not.
struct CallTraceInput {
    const host::ResolvedRun* run = nullptr;
    const OpResults* results = nullptr;  // complete
    bool all_views = false;               // results has the compute-only and sequential times
    std::vector<std::string> stream_names;  // by stream id (the call's streams, the others "stream")
    std::vector<int> stream_lanes;          // by stream id: its tracks' lane (TraceInput::stream_lanes)
    std::vector<std::string> stage_names;
    SimTime start = 0;  // the call's start barrier (earliest rank) and end (latest rank)
    SimTime end = 0;
    std::map<int, std::array<SimTime, kPipeCount>> busy_ps;  // per rank, the call's kernels
    SignalNamer signal_name;
    // An async call's trace: every call in it (the traced one first, then by start) and its lane.
    std::vector<std::pair<OpResults, int>> calls;
};

// OpConfig::trace checked before the call runs: no async call pending (a trace starts with its
// call), no async call's trace open (`open_trace_op`: the op whose is, empty if none), the ranks
// in the context. Throws SimError naming the op and the field in the caller's words.
void check_trace_request(const std::string& op, const OpConfig& config, bool calls_pending,
                         const std::string& open_trace_op, int ranks, ParamWords words);

// Writes config.trace from the cluster's log (SimError naming the file if it cannot).
void write_call_trace(const Cluster& cluster, const OpConfig& config, const CallTraceInput& in);

}  // namespace tandem::api::detail
