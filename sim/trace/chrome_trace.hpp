#pragma once
// Chrome Trace Event JSON of a run's event log (opens in Perfetto and chrome://tracing): one
// process per rank, one track per core and pipe, flow arrows from each TNOTIFY to the TWAIT it
// released, counters of link bandwidth in use. The format is documented in
// prof_analysis/TRACE_FORMAT.md. Written as a stream (big runs have millions of events), to a
// temporary name and renamed.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/pipe.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/exec/machine_port.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct CostModel;
class Topology;

// Names a signal word for the trace ("summary[src=3]"); empty when it has no name.
using SignalNamer = std::function<std::string(int rank, std::int64_t address)>;

struct TraceFilter {
    std::vector<int> ranks;                             // empty: every rank
    std::optional<std::pair<double, double>> window_us; // relative to the view's start
};

// A link as its counter track names it: its source rank (the process it is drawn in) and name.
struct TraceLink {
    int src = 0;
    std::string name;  // "link 2->3"
};

// What the trace needs of the machine that ran the log, taken from it while it lives
// (trace_machine()): the costs that tell a stalled TWAIT and the time its signal was released,
// and the links the run booked.
struct TraceMachine {
    SimTime issue_ps = 0;
    SimTime twait_poll_ps = 0;
    std::map<int, TraceLink> links;  // by link id
};

// The machine's part of a trace: `cost`'s figures and the links in `link_usage`.
TraceMachine trace_machine(const CostModel& cost, const Topology& topology, const std::map<int, LinkSteps>& link_usage);

struct TraceInput {
    const std::vector<InstrRecord>* log = nullptr;      // the view's records (Cluster::event_log order)
    std::vector<std::string> stream_names;               // by stream id
    // By stream id, in a trace of several API calls: the lane (1, 2, ...) of its tracks, one per
    // set of streams the calls ran on. Lane n > 1 has tracks of its own, "AIC0 CUBE (lane n)":
    // the simulator gives each stream cores of its own, so two calls' blocks may run on one core
    // index at once. Empty, or 1: the core's own tracks.
    std::vector<int> stream_lanes;
    std::vector<std::string> stage_names;                // by stage id (records' stage)
    SimTime view_start = 0;
    SimTime view_end = 0;
    nlohmann::json metadata = nlohmann::json::object();  // run identity, copied into otherData
    std::map<int, std::array<SimTime, kPipeCount>> busy_ps;  // simulator's per-rank busy totals
    // Bandwidth booked on each link (bytes per second, step function): Cluster::link_usage().
    std::map<int, LinkSteps> link_usage;
    // Bytes through each chip's L2 and HBM per bin of `memory_bin_ps` (by rank):
    // Cluster::memory_usage().
    std::map<int, std::vector<MemBinBytes>> memory_usage;
    SimTime memory_bin_ps = 0;  // their length (kMemUsageBinPs); needed when there are bins
    TraceMachine machine;  // must name every link of link_usage
    SignalNamer signal_name;
};

// Writes the trace of `in` to `path`; throws SimError naming the path on failure.
void write_chrome_trace(const std::string& path, const TraceInput& in, const TraceFilter& filter = {});

// Parse a trace filter: "0,3,5" (ranks) and "A:B" (a window, microseconds from the view's start).
// Throw SimError naming the text; the caller names where it came from.
std::vector<int> parse_rank_list(const std::string& text);
std::pair<double, double> parse_window_us(const std::string& text);

}  // namespace tandem
