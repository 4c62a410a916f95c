#pragma once
// What one run is asked to do: the seed's run.sh flags plus Tandem's own, for any registered op
// (README.md "Run an op", docs/ops/README.md; with no --op, the seed's AllGather+GEMM).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem::kernels {
struct OpDesc;
}

namespace tandem::host {

enum class CommMode { Mesh, Ring };

struct RunConfig {
    std::string op = "allgather_gemm";  // --op: a registered op (kernels/registry.hpp)
    // The op itself when it is not in the registry (an API user's op, kernels/op_desc.hpp; its
    // name is `op`); null: `op` is looked up in the registry. Not owned: the caller keeps it alive.
    const kernels::OpDesc* op_desc = nullptr;
    std::string variant;               // --variant (default: the op's first)
    std::string schedule;              // --schedule (default: the variant's first)
    std::string dtype = "fp16";        // --dtype: A, B and bias
    std::string out_dtype;             // --out-dtype (default: the variant's first)
    std::string bias = "none";         // --bias none|m|n
    std::map<std::string, int> knobs;  // the variant's integer knobs given (--chunk-tiles, ...)
    bool list_ops = false;             // --list-ops
    std::string fault;                 // tests only: a sabotage the variant lists (VariantDesc::faults)
    std::string soc = "Ascend910B1";
    std::string profile_file;          // --profile FILE overrides the SoC lookup
    int ranks = 2;                     // -n
    int m = 2048;                      // --gm
    int k = 2048;                      // --gk
    int n = 1024;                      // --gn
    int base_m = 128;                  // --base-m
    int base_n = 256;                  // --base-n
    std::optional<int> compute_blocks; // default: the profile's AIC count
    std::optional<int> comm_blocks;    // default: the profile's AIV count
    CommMode comm_mode = CommMode::Mesh;
    bool timing_only = false;
    std::string json_file;             // --json FILE
    std::string trace_file;            // --trace FILE: Chrome trace of the pipelined view
    std::vector<int> trace_ranks;      // --trace-ranks: keep only these ranks (empty: all)
    std::optional<std::pair<double, double>> trace_window_us;  // --trace-window-us START:END
    std::string out_dir = "out";       // output_rank<r>.bin, and seed-format inputs if asked
    bool write_inputs = false;         // --write-inputs: also write pe_<r>_a.bin, pe_<r>_b.bin, golden.bin
    std::string input_dir;             // --input-dir DIR: read the seed's input files instead of generating
    bool quiet = false;
    bool sanitize = false;             // --sanitize: check synchronisation, exit kSanitizerExitCode on a violation
    bool record_log = false;           // keep the pipelined view's event log (for --trace and tests)
    std::string sweep_file;            // --sweep FILE: run every row of FILE (host/batch/sweep.hpp)
    bool tune = false;                 // --tune: search chunk size, tile and block split (host/batch/tune.hpp)
    std::string sweep_out;             // --sweep-out PREFIX (default: out/sweep, out/tune with --tune)
    std::optional<int> jobs;           // --jobs N: configurations run at once (default: the host's cores)
    // Host threads this run's machine may keep busy (ClusterOptions::host_threads; 0: every host
    // core). A sweep sets each of its concurrent runs to its share of the host (sim/host_threads.hpp).
    int host_threads = 0;
};

// The exit code of a --sanitize run that found a violation (1: verification failed, 2: error).
inline constexpr int kSanitizerExitCode = 4;

inline const char* comm_mode_name(CommMode m) { return m == CommMode::Mesh ? "mesh" : "ring"; }

}  // namespace tandem::host
