#pragma once
// The results of one run of any op: the measured views, the metrics derived from them
// (docs/RESULTS.md "Metrics"), the results JSON (docs/RESULTS.md "The results JSON") and the
// printed summary (the seed's format for an op that keeps it, OpDesc::seed_format).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/ops/op_facade.hpp"
#include "host/params/run_request.hpp"

namespace tandem::host {

// The three benchmark views, in simulated microseconds (host clock, launch and sync included).
struct ViewTimes {
    double compute_only_us = 0;  // compute kernel alone, every chunk marked ready by the host
    double seq_comm_us = 0;      // sequential view: comm kernel to completion...
    double seq_compute_us = 0;   // ...then the compute kernel
    double pipelined_us = 0;     // both kernels on two streams at once
};

// What was run: every parameter of the run as resolved (the results JSON's identity keys are
// their json_key in the schema, host/params/param_schema.hpp; docs/RESULTS.md "The results
// JSON") and what the op says of itself.
struct RunIdentity {
    RunRequest run;     // every value set (soc: the profile's name); op_desc is not kept
    std::string title;  // the op's (the summary's first line)
    std::string comm_kind = "none";
    double comm_payload_bytes = 0;  // the collective's bytes per rank (OpDesc::comm_payload_bytes)
    // The op keeps the seed's printed format (OpDesc::seed_format): its summary lines and labels.
    std::optional<kernels::SeedFormat> seed_format;
};

RunIdentity make_identity(const ResolvedRun& run);

enum class Verification { Passed, Failed, Skipped };
const char* verification_name(Verification v);  // "passed" | "failed" | "skipped"

struct RunResults {
    RunIdentity id;
    ViewTimes times;
    Verification verification = Verification::Skipped;
    nlohmann::json extras = nlohmann::json::object();  // extra keys for the JSON (must not clash with the contract)
};

// Everything derived from the views (docs/RESULTS.md "Metrics"). A quantity whose denominator is zero is 0.
struct RunMetrics {
    double sequential_us = 0;       // seq_comm + seq_compute
    double speedup = 0;             // sequential / pipelined
    double time_saved_us = 0;       // sequential - pipelined
    double time_saved_pct = 0;      // of sequential
    double overlap_eff_pct = 0;     // (sequential - pipelined) / min(seq_comm, seq_compute) * 100, floored at 0
    double exposed_comm_us = 0;     // pipelined - compute_only
    double ideal_bound_us = 0;      // max(seq_comm, compute_only)
    double flops = 0;               // 2*M*K*N
    double comm_payload_bytes = 0;  // the collective's payload per rank ((M/n)*K*2*(n-1) for the seed)
    double tflops_per_rank = 0;     // flops / pipelined
    double tflops_compute_only = 0; // flops / compute_only
    double tflops_sequential = 0;   // flops / sequential
    double comm_payload_gib_s = 0;  // comm_payload_bytes / pipelined, GiB/s (2^30 bytes): the op's comm rate
    double comm_payload_gb_s = 0;   // the same in GB/s (10^9 bytes)
    double seq_comm_gib_s = 0;      // comm_payload_bytes / seq_comm: the comm kernel alone, GiB/s
};

RunMetrics compute_metrics(const RunIdentity& id, const ViewTimes& t);

// Every contract key (docs/RESULTS.md "The results JSON"), then the extra metrics, then `r.extras`.
// Throws tandem::SimError if an extra key clashes with one of ours.
//
// The collective's figures have neutral names for every op (comm_payload_bytes,
// comm_payload_gib_s, comm_payload_gb_s); the seed's names for them (allgather_bytes,
// allgather_gib_s, allgather_gb_s) stay as aliases with the same values: allgather_gib_s is a
// contract key, and scripts read them.
nlohmann::json to_json(const RunResults& r);

// The contract's required keys, in the order docs/RESULTS.md lists them.
const std::vector<std::string>& contract_keys();

// Every key to_json writes that is not a parameter of the run (the schema's json keys) nor an
// extra: the views, the figures derived from them and the op's facts (comm_kind).
const std::vector<std::string>& result_figure_keys();

// Writes `j` (indented, with a final newline) to `path` through a temp file and a rename.
// Throws tandem::SimError naming the path.
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// The seed-style summary block: "[SUCCESS] AllGather GEMM (Tandem sim, <soc>, <n> ranks, <mode>)"
// then one aligned line per metric ("[FAILED]" when verification failed).
std::string format_summary(const RunResults& r);

}  // namespace tandem::host
