#pragma once
// The results of one run: the measured views, the metrics derived from them (docs/RESULTS.md
// "Metrics"), the results JSON (docs/RESULTS.md "The results JSON") and the printed summary
// (the seed's format).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/cli/command_line.hpp"

namespace tandem::host {

// The three benchmark views, in simulated microseconds (host clock, launch and sync included).
struct ViewTimes {
    double compute_only_us = 0;  // compute kernel alone, every chunk marked ready by the host
    double seq_comm_us = 0;      // sequential view: comm kernel to completion...
    double seq_compute_us = 0;   // ...then the compute kernel
    double pipelined_us = 0;     // both kernels on two streams at once
};

// What was run: the contract's identity keys, and the op's (docs/RESULTS.md "The results JSON").
struct RunIdentity {
    std::string op = "allgather_gemm";
    std::string title = "AllGather GEMM";  // for the summary's first line
    std::string variant;
    std::string schedule;
    std::string dtype;
    std::string out_dtype;
    std::string bias = "none";
    std::string comm_kind = "allgather";
    double comm_payload_bytes = 0;  // the collective's bytes per rank (OpDesc::comm_payload_bytes)
    std::string soc;
    int ranks = 0;
    int m = 0;
    int k = 0;
    int n = 0;
    int base_m = 0;
    int base_n = 0;
    int compute_blocks = 0;
    int comm_blocks = 0;
    std::string comm_mode;  // "mesh" | "ring"
    std::string data_mode;  // "functional" | "timing-only"
};

// `soc` is the profile's name (cfg.soc may be overridden by --profile). The block counts and the
// op's defaults must be resolved (apply_profile_defaults); throws tandem::SimError otherwise.
RunIdentity make_identity(const RunConfig& cfg, const std::string& soc);

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
    double allgather_bytes = 0;     // the collective's payload per rank ((M/n)*K*2*(n-1) for the seed)
    double tflops_per_rank = 0;     // flops / pipelined
    double tflops_compute_only = 0; // flops / compute_only
    double tflops_sequential = 0;   // flops / sequential
    double allgather_gib_s = 0;     // allgather_bytes / pipelined, GiB/s (2^30 bytes): the op's comm rate
    double allgather_gb_s = 0;      // the same in GB/s (10^9 bytes)
    double seq_comm_gib_s = 0;      // allgather_bytes / seq_comm: the comm kernel alone, GiB/s
};

RunMetrics compute_metrics(const RunIdentity& id, const ViewTimes& t);

// Every contract key (docs/RESULTS.md "The results JSON"), then the extra metrics, then `r.extras`.
// Throws tandem::SimError if an extra key clashes with one of ours.
nlohmann::json to_json(const RunResults& r);

// The contract's required keys, in the order docs/RESULTS.md lists them.
const std::vector<std::string>& contract_keys();

// Writes `j` (indented, with a final newline) to `path` through a temp file and a rename.
// Throws tandem::SimError naming the path.
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// The seed-style summary block: "[SUCCESS] AllGather GEMM (Tandem sim, <soc>, <n> ranks, <mode>)"
// then one aligned line per metric ("[FAILED]" when verification failed).
std::string format_summary(const RunResults& r);

}  // namespace tandem::host
