#pragma once
// Tandem's fused-ops API (library target Tandem::tandem): a simulated Ascend-style cluster as a
// context, tensors in its symmetric memory (one buffer per rank, same shape on every rank, as
// Iris's symmetric heap), and every registered fused op called the way Iris's ctx.ops are:
//
//   tandem::Context ctx({.soc = "Ascend910B1", .ranks = 4});
//   tandem::Tensor a = ctx.zeros(512, 1024, tandem::DataType::F16);   // per rank: M/4 x K
//   ...
//   tandem::Workspace ws = ctx.ops().run("allgather_gemm", c, a, b);
//   ws.results().pipelined_us;                                        // simulated time
//
// This header uses only the standard library; the simulator stays behind it. Every failure is a
// tandem::Error carrying the simulator's one-line message (what and where).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tandem::kernels {
struct OpDesc;  // an op's description: include <tandem/kernel.hpp> to write one (docs/WRITE_A_KERNEL.md)
}

namespace tandem::api {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// I8: int8 inputs of the Iris-family ops (int8 x int8 summed in int32; their output is F32).
enum class DataType { F16, BF16, F32, I8 };
const char* dtype_name(DataType t);  // "fp16" | "bf16" | "fp32" | "int8"
DataType parse_data_type(const std::string& name);

// How an error names a refused parameter: the C++ API's names (OpConfig's fields as `base_m = 64`,
// the shape, read off the tensors, as `K = 1000`) or the Python module's keywords (`base_m=64`,
// `k=1000`). The Python module sets Python.
enum class ParamWords { Cpp, Python };

struct ContextOptions {
    std::string soc = "Ascend910B1";  // a profile in sim/profiles (or $TANDEM_PROFILE_DIR)
    std::string profile_file;         // a profile file; overrides soc
    int ranks = 2;
    bool functional = true;           // false: timing only (tensors hold no data; times are identical)
    int host_threads = 0;             // host threads the simulation may keep busy (0: one per host core)
    ParamWords words = ParamWords::Cpp;
};

namespace detail {
struct ContextState;
struct TensorState;
struct WorkspaceState;
}  // namespace detail

// One buffer per rank, rows x cols, row-major, in the context's simulated GM.
class Tensor {
public:
    Tensor() = default;
    bool valid() const { return state_ != nullptr; }
    int ranks() const;
    int rows() const;
    int cols() const;
    DataType dtype() const;

    // Rank `rank`'s values, converted to / from the tensor's dtype (round to nearest even; an int8
    // tensor refuses a value outside -128..127 after rounding). rows*cols values. Functional
    // contexts only; not while an async op writing it is pending.
    void from_host(int rank, std::span<const float> values);
    std::vector<float> to_host(int rank) const;
    // The raw element bits (2 bytes for fp16/bf16, 4 for fp32, 1 for int8), rows*cols elements.
    void from_host_bits(int rank, const void* data, std::size_t bytes);
    void to_host_bits(int rank, void* data, std::size_t bytes) const;

private:
    friend struct detail::ContextState;
    friend class Context;
    friend class Ops;
    std::shared_ptr<detail::TensorState> state_;
};

// What a call runs: variant, schedule, tiles, block split, knobs (empty / 0: the defaults the
// command line has: the op's first variant, its first schedule, 128 x 256 tiles, one block per
// AIC / AIV core unless the variant says otherwise). Each field is a parameter of Tandem's
// parameter schema, with the meaning it has on the command line and in Python (parameters()):
// compute_blocks is the GEMM kernel's blocks (Iris's gemm_sms), comm_blocks the comm kernel's
// (Iris's comm_sms).
struct OpConfig {
    std::string variant;
    std::string schedule;
    int base_m = 0;
    int base_n = 0;
    int compute_blocks = 0;
    int comm_blocks = 0;
    std::string comm_mode;              // "mesh" | "ring" (where the variant offers it)
    std::map<std::string, int> knobs;   // the variant's integer knobs (chunk_tiles, ...)
    bool all_views = false;             // also time compute-only and sequential (timing-only launches)
    std::string fault;                  // tests only: a deliberate bug the variant lists
    // Check the call's synchronisation (the simulator's --sanitize: docs/SANITIZER.md): every
    // GM access of its kernels against the flags, barriers and launches that order them. A
    // violation fails the call with an Error whose message is the count and the first violation in
    // full ("[flag before data] ..."). An async call is checked when barrier() completes it.
    // Sanitized and plain calls mix freely, but not while an async call of the other kind is
    // pending. What a later call needs of an earlier one (a flag value left by a sanitized call,
    // judged "stale" if a later wait is satisfied by it) is kept across calls.
    bool sanitize = false;
    // Run each view of the call (the pipelined one, and with all_views the other two) this many
    // times before it is timed: timing-only launches, not reported, that leave the chip's L2 as a
    // host's warm-up iterations would (the command line's --warmup-runs). 0: none.
    int warmup_runs = 0;
    // Write a Chrome trace of the call (the command line's --trace: docs/TRACE.md) to this file
    // once it completed: every instruction of its kernels per core and pipe, the flows from each
    // notify to the wait it released, the links' and the memory's use; prof_analysis/report.py
    // reads it. No async call may be pending when it starts. An async call's trace is written by
    // the barrier() that completes it and holds every kernel launched until then (the calls it
    // overlapped, listed in its "calls"); one trace is open at a time. Empty: none.
    std::string trace;
    // Keep only these ranks in the trace (--trace-ranks); only their instructions are held while
    // the call simulates. Empty: every rank.
    std::vector<int> trace_ranks;
    // Keep only the events overlapping this window, in microseconds from the call's start
    // (--trace-window-us).
    std::optional<std::pair<double, double>> trace_window_us;
};

// One call's simulated times, in microseconds, on the simulated host clocks.
struct OpResults {
    std::string op;
    std::string variant;
    bool complete = false;                  // false while an async call is pending
    double pipelined_us = 0;                // slowest rank: from the call's start barrier to the op's end
    std::vector<double> per_rank_us;        // the same per rank
    double start_us = 0;                    // earliest rank's start on the simulated clock
    double end_us = 0;                      // latest rank's end
    std::optional<double> compute_only_us;  // with all_views
    std::optional<double> seq_comm_us;
    std::optional<double> seq_compute_us;
    // The figures derived from the views, computed by the command line's code under its results
    // JSON's keys (docs/RESULTS.md "Metrics"); those that need the compute-only and sequential
    // views only with all_views.
    std::optional<double> sequential_us;    // seq_comm + seq_compute
    std::optional<double> speedup;          // sequential / pipelined
    std::optional<double> time_saved_us;    // sequential - pipelined
    std::optional<double> time_saved_pct;   // of sequential
    std::optional<double> overlap_eff_pct;  // (sequential - pipelined) / min(seq_comm, seq_compute) * 100, floored at 0
    std::optional<double> exposed_comm_us;  // pipelined - compute_only
    std::optional<double> ideal_bound_us;   // max(seq_comm, compute_only)
    double flops = 0;                       // 2 M K N
    double tflops_per_rank = 0;             // flops / pipelined
    std::optional<double> tflops_compute_only;
    std::optional<double> tflops_sequential;
    double comm_payload_bytes = 0;          // the op's collective's payload per rank
    double comm_payload_gib_s = 0;          // comm_payload_bytes / pipelined (GiB/s, 2^30 bytes)
    double comm_payload_gb_s = 0;           // the same in GB/s (10^9 bytes)
    std::optional<double> seq_comm_gib_s;   // comm_payload_bytes / seq_comm
    std::map<std::string, int> knobs;       // the knobs as used (defaults resolved)
    int base_m = 0;                         // the output tile the call ran with (rows x cols)
    int base_n = 0;
    // An op with its own math (moe_ffn), in a functional context: its output checked against the
    // op's own golden once the call completed, as the command line does ("passed" or "failed";
    // "skipped" for the other ops, whose math the caller checks against A x B, and timing-only).
    std::string verification = "skipped";
    std::string verification_report;        // which ranks and elements erred, when it failed
};

// One result and its key, as every surface shows it: OpResults' fields under the results JSON's
// keys where the command line has the same figure (docs/RESULTS.md), the others under their
// member's name.
using ResultValue = std::variant<bool, int, double, std::string, std::vector<double>, std::map<std::string, int>>;

// Every field of `r` that is set, in OpResults' order: the Python module's results dict is this,
// and tests hold it to the command line's results JSON.
std::vector<std::pair<std::string, ResultValue>> result_fields(const OpResults& r);

// An op's own device memory (windows, flags, staging) for one shape and configuration; reusable
// across calls of that shape and configuration (not concurrently: a reused workspace must not
// have a pending async call).
class Workspace {
public:
    Workspace() = default;
    bool valid() const { return state_ != nullptr; }
    const std::string& op() const;
    std::string describe() const;     // op, variant, shape, dtypes
    const OpResults& results() const; // of its latest call
    int calls() const;                // calls run on it

private:
    friend struct detail::ContextState;
    std::shared_ptr<detail::WorkspaceState> state_;
};

class Context;

// What an op computes, from its registered description: how A (M x K), B (K x N) and the output
// (M x N) split over the ranks ("replicated" | "rows" | "cols"); with k_per_rank, each rank's
// A is M x K and B is K x N and the ranks' products are summed.
struct OpInfo {
    std::string name;
    std::string title;
    std::string doc;
    std::string a_split;
    std::string b_split;
    std::string out_split;
    bool k_per_rank = false;
    std::vector<std::string> variants;  // the first is the default
    std::string variant;                // the variant the next three describe (default: the op's first)
    bool takes_bias = false;
    std::vector<std::string> dtypes;    // its input dtypes
    std::vector<std::string> out_dtypes;
    // The op checks its output against a golden of its own (its math is not A x B: moe_ffn), so
    // a reference made from the sharding does not apply to it.
    bool own_math = false;
};

// A value of an OpConfig field or knob set by name (set_config).
using ConfigValue = std::variant<int, bool, std::string>;

// Sets the OpConfig field `key` names: the field's name, or a Python keyword or alias of it
// (gemm_sms is compute_blocks, block_size_m is base_m); any other key is a knob of the variant.
// Throws Error naming the key for a value of the wrong type, or a key that names a parameter the
// call takes elsewhere (k: read off the tensors; num_ranks: the context's).
void set_config(OpConfig& config, const std::string& key, const ConfigValue& value);

// The type set_config takes for `key`: "int", "flag" or "text" ("int" for a knob).
std::string config_key_type(const std::string& key);

// A parameter as the API and the Python module take it (Tandem's parameter schema).
struct ParameterInfo {
    std::string name;       // the schema's name ("base_m")
    std::string type;       // "int" | "choice" | "text" | "path" | "flag"
    std::string help;
    std::string api_field;  // "OpConfig::base_m", "ContextOptions::ranks", "Ops::run(async_op)"; empty: none
    std::string python_keyword;  // empty: none
    std::vector<std::string> python_aliases;
    std::string python_place;    // "context" | "config" | "call" | "tensors" (named in messages only)
    bool python_call_keyword = false;  // a config key the call also takes as a keyword (sanitize=True)
    // An "int" parameter's accepted values, when the schema bounds them (warmup_runs: 0..100);
    // unset: any positive integer the parameter's own checks accept.
    std::optional<int> min_value;
    std::optional<int> max_value;
};

// Every parameter the C++ API or the Python module has.
std::vector<ParameterInfo> parameters();

class Ops {
public:
    // Every registered op (kernels/registry.cpp): a new op appears here by itself; then the ops
    // added to this context.
    std::vector<std::string> names() const;
    // Adds a user's op (its kernels written against the tile ISA and its description:
    // <tandem/kernel.hpp>, docs/WRITE_A_KERNEL.md) to this context only: run(op->name, ...),
    // info() and names() then treat it as a shipped op. Refused: a name of a shipped op or of an
    // op already added, a description missing what the host needs (variants, make, validate, ...).
    void add(std::shared_ptr<const kernels::OpDesc> op);
    // The op's sharding and variants, and what `variant` (default: the op's first) accepts.
    OpInfo info(const std::string& op, const std::string& variant = "") const;
    // Iris's ctx.ops.<op>(output_tensor, A, B, bias, async_op, config, workspace) -> workspace.
    // A, B, output per rank as the op shards them (B is K x N, row-major); bias: 1 x N (added to
    // every row) or M x 1 (added to every column; 1 x M also, where M != N).
    // async_op=false: returns after the op finished on every rank and a host barrier.
    // async_op=true: returns once the kernels are launched; Context::barrier() completes it.
    Workspace run(const std::string& op, Tensor& output, const Tensor& a, const Tensor& b, const Tensor* bias = nullptr,
                  bool async_op = false, const OpConfig& config = {}, Workspace workspace = {});

private:
    friend class Context;
    explicit Ops(detail::ContextState* state) : state_(state) {}
    detail::ContextState* state_;
};

class Context {
public:
    explicit Context(const ContextOptions& options);
    ~Context();  // completes pending async calls first
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    int ranks() const;
    bool functional() const;
    std::string profile_name() const;

    Tensor zeros(int rows, int cols, DataType dtype);
    Tensor empty(int rows, int cols, DataType dtype);  // zeros too (the simulator's memory starts zeroed)
    // One vector of rows*cols values per rank.
    Tensor from_host(int rows, int cols, DataType dtype, const std::vector<std::vector<float>>& per_rank);

    Ops& ops() { return ops_; }
    // Completes every pending async call (each rank synchronizes its streams, outputs are
    // copied out, results filled), then a host barrier across the ranks. Sanitized async calls
    // (OpConfig::sanitize) are checked here: a violation throws Error with the report.
    void barrier();
    void synchronize() { barrier(); }
    // The slowest rank's simulated host clock.
    double now_us() const;

private:
    std::shared_ptr<detail::ContextState> state_;
    Ops ops_;
};

}  // namespace tandem::api

namespace tandem {
using api::Context;
using api::ContextOptions;
using api::DataType;
using api::OpConfig;
using api::OpResults;
using api::Tensor;
using api::Workspace;
}  // namespace tandem
