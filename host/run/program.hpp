#pragma once
// One run of any op end to end, as the seeds' main.cpp do it: inputs (generated from the op's
// sharding, or read from the seed's files), the three views on the simulated machine,
// verification of every rank against the OpenBLAS golden, and the results.
#include <string>
#include <vector>

#include "host/run/op_bench.hpp"
#include "host/run/results.hpp"
#include "host/cli/command_line.hpp"
#include "host/run/verify.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

struct ProgramOutput {
    RunResults results;
    BenchOutcome bench;
    std::vector<RankVerification> verification;  // empty in timing-only mode
    std::string failure_report;                  // worst elements when verification failed
    double wall_seconds = 0;
};

// `cfg` must be validated and have its defaults resolved (apply_profile_defaults).
ProgramOutput run_program(const RunConfig& cfg, const Profile& profile);

// Writes out/output_rank<r>.bin (functional runs; raw, row-major, in the output dtype).
void write_program_files(const RunConfig& cfg, const ProgramOutput& out);

// Writes cfg.trace_file: the pipelined view's trace (the run must have kept its log).
void write_trace(const RunConfig& cfg, const Profile& profile, const ProgramOutput& out);

// The run's functional inputs: generated (every op), or the seed's files (--input-dir).
OpInputs make_inputs(const RunConfig& cfg);
OpInputs read_inputs(const RunConfig& cfg);

}  // namespace tandem::host
