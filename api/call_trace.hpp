#pragma once
// A traced call of the API (OpConfig::trace): the cluster logs the call's kernels, and the call
// writes what the command line's --trace writes (sim/trace/chrome_trace.hpp, docs/TRACE.md),
// with the call's identity in place of a run's, so prof_analysis/report.py reads either.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "host/ops/op_facade.hpp"
#include "sim/core/pipe.hpp"
#include "sim/machine/cluster.hpp"
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
    std::vector<std::string> stage_names;
    SimTime start = 0;  // the call's start barrier (earliest rank) and end (latest rank)
    SimTime end = 0;
    std::map<int, std::array<SimTime, kPipeCount>> busy_ps;  // per rank, the call's kernels
    SignalNamer signal_name;
};

// OpConfig::trace checked before the call runs: a synchronous call, no async call pending, the
// ranks in the context. Throws SimError naming the op and the field in the caller's words.
void check_trace_request(const std::string& op, const OpConfig& config, bool async_op, bool calls_pending, int ranks,
                         ParamWords words);

// Writes config.trace from the cluster's log (SimError naming the file if it cannot).
void write_call_trace(const Cluster& cluster, const OpConfig& config, const CallTraceInput& in);

}  // namespace tandem::api::detail
