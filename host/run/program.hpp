#pragma once
// One run of any op end to end, as the seeds' main.cpp do it: inputs (generated from the op's
// sharding, or read from the seed's files), the three views on the simulated machine,
// verification of every rank against the OpenBLAS golden, and the results.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/run/op_session.hpp"
#include "host/run/results.hpp"
#include "host/run/run_progress.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/verify.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// What a run does besides simulating: the files it reads and writes, the log it keeps, the host
// threads it may use.
struct RunOutputs {
    std::string out_dir = "out";  // output_rank<r>.bin (functional runs), the seed's inputs with write_inputs
    bool write_inputs = false;    // also write the seed's input files and the golden (OpDesc::seed_format)
    std::string input_dir;        // read the seed's input files from here instead of generating
    std::string trace_file;       // a Chrome trace of the pipelined view
    std::vector<int> trace_ranks;  // keep only these ranks in the trace (empty: see trace_default_ranks)
    // With no trace_ranks and more than 2 ranks, keep rank 0 and the slowest other rank of the
    // pipelined view (the command line's default: a trace a user can open; the run still holds
    // every rank's instructions to find the slowest) instead of every rank.
    bool trace_default_ranks = false;
    std::optional<std::pair<double, double>> trace_window_us;  // keep only this window of the trace
    bool record_log = false;      // keep the pipelined view's event log (a trace keeps it too)
    // Host threads the run's machine may keep busy (ClusterOptions::host_threads; 0: every host
    // core). A sweep sets each of its concurrent runs to its share of the host (sim/host_threads.hpp).
    int host_threads = 0;
    // Where to report how far the views have got while they run (none by default; the command
    // line's stderr unless --quiet).
    ProgressSink progress;
};

struct ProgramOutput {
    RunResults results;
    ViewsOutcome bench;
    std::vector<RankVerification> verification;  // empty in timing-only mode
    std::string failure_report;                  // worst elements when verification failed
    double wall_seconds = 0;
};

// `run` from the ops facade (host/ops/op_facade.hpp). With outputs.trace_file set it keeps the
// pipelined view's log for write_trace, which the caller calls (after printing the summary).
ProgramOutput run_program(const ResolvedRun& run, const Profile& profile, const RunOutputs& outputs = {});

// Writes out/output_rank<r>.bin (functional runs; raw, row-major, in the output dtype).
void write_program_files(const ResolvedRun& run, const RunOutputs& outputs, const ProgramOutput& out);

// What write_trace kept: the ranks (empty: every rank), whether they are the default choice,
// the window, and the file's size.
struct TraceWritten {
    std::vector<int> ranks;
    bool default_ranks = false;
    std::optional<std::pair<double, double>> window_us;
    std::uintmax_t bytes = 0;
};

// Writes outputs.trace_file: the pipelined view's trace (the run must have kept its log).
TraceWritten write_trace(const RunOutputs& outputs, const Profile& profile, const ProgramOutput& out);

// "t.json (36.2 MB): ranks 0 and 5 of 8 (rank 0 and the slowest other rank; --trace-ranks all
// keeps every rank), the whole pipelined view": what the summary says of the trace.
std::string describe_trace(const std::string& path, const TraceWritten& t, int ranks);

// The run's functional inputs: generated (every op), or the seed's files (an op that keeps them).
OpInputs make_inputs(const ResolvedRun& run, int host_threads = 0);
OpInputs read_inputs(const ResolvedRun& run, const std::string& input_dir);

}  // namespace tandem::host
