#pragma once
// One AllGather+GEMM run end to end, as the seed's main.cpp does it: inputs (generated like
// gen_data.py, or read from the seed's files), the three views on the simulated machine,
// verification of every rank against the OpenBLAS golden, and the results.
#include <string>
#include <vector>

#include "host/ag_bench.hpp"
#include "host/results.hpp"
#include "host/run_config.hpp"
#include "host/verify.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

struct ProgramOutput {
    RunResults results;
    AgBenchOutcome bench;
    std::vector<RankVerification> verification;  // empty in timing-only mode
    std::string failure_report;                  // worst elements when verification failed
    double wall_seconds = 0;
};

// `cfg` must be validated and have its block counts resolved.
ProgramOutput run_allgather_gemm_program(const RunConfig& cfg, const Profile& profile,
                                         kernels::ComputeFault fault = kernels::ComputeFault::None);

// Writes out/output_rank<r>.bin (functional runs).
void write_program_files(const RunConfig& cfg, const ProgramOutput& out);

// Writes cfg.trace_file: the pipelined view's trace (the run must have kept its log).
void write_trace(const RunConfig& cfg, const Profile& profile, const ProgramOutput& out);

AgInputs make_inputs(const RunConfig& cfg);
AgInputs read_inputs(const RunConfig& cfg);

}  // namespace tandem::host
