#pragma once
// The parameters Tandem's callers set, each described once: its name, type, unit, range, help,
// and how every surface spells it (the command line's flag and aliases, the sweep file's column,
// the results JSON's key, the Python module's keyword, the C++ API's field). The command line,
// the sweep rows, the results JSON and the MPI wire, --tune's "Run it" line, --help (and run.sh's
// help, which is the binary's), the C++ API and the Python keywords are built from this table;
// tests/host/param_schema_test.cpp holds each surface to it both ways.
//
// One name, one meaning: an alias means exactly what its parameter means, on every surface
// (Iris's `gemm_sms` is the GEMM kernel's blocks, `--compute-blocks`, on the command line, in
// Python and in the C++ API alike).
//
// An op's own integer knobs (chunk_tiles, ...) are described by the op (kernels::KnobDesc) and
// spelled by one rule on every surface: flag --<name with '-'>, column, JSON key and Python key
// <name> (knob_flag() below).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "host/params/run_request.hpp"

namespace tandem::host {

enum class Param : std::uint8_t {
    // the machine
    RunMode, Soc, ProfileFile, Ranks,
    // the shape, the tiles and the blocks
    M, K, N, BaseM, BaseN, ComputeBlocks, CommBlocks,
    // the op
    Op, Variant, Schedule, Dtype, OutDtype, Bias, CommMode, Fault,
    // the data and the checks
    TimingOnly, Sanitize, WarmupRuns,
    // a call of the API
    AllViews, AsyncOp, HostThreads,
    // the program (command line only)
    Help, ListOps, Json, Trace, TraceRanks, TraceWindowUs, OutDir, WriteInputs, InputDir, Quiet, Sweep, Tune,
    SweepOut, Jobs,
};

enum class ParamType : std::uint8_t {
    Int,     // a whole decimal number
    Choice,  // one of ParamDesc::choices
    Text,    // a name
    Path,    // a file or directory
    Flag,    // on or off: a flag without value on the command line, true/false in a sweep row
};

// Where a parameter lives: what one run is (a RunRequest, host/params/run_request.hpp), how an
// API call runs it, or what the command-line program does around its runs.
enum class ParamScope : std::uint8_t { Run, Call, Program };

// Where the Python module takes it.
enum class PythonPlace : std::uint8_t {
    None,
    Context,  // tandem.Context(num_ranks=..., ...)
    Config,   // config={"base_m": ...} of a call
    Call,     // a keyword of the call itself (ctx.ops.<op>(..., async_op=True))
    Tensors,  // read off the call's tensors; the keyword only names it in messages (k=1000: ...)
};

struct IntRange {
    int lo = 0;
    int hi = 0;
};

// The RunRequest member a Run parameter is: set_param, param_text and the results JSON reach it
// from the parameter's row (docs/PARAMETERS.md "Adding a parameter").
using RunMember = std::variant<std::monostate, std::string RunRequest::*, int RunRequest::*, std::optional<int> RunRequest::*,
                               bool RunRequest::*, DType RunRequest::*, std::optional<DType> RunRequest::*,
                               kernels::BiasKind RunRequest::*>;
// The kernels::OpParams member a Run parameter resolves into, if the op sees it (op_params_of
// copies it; an unset value becomes OpParams' own default).
using OpMember = std::variant<std::monostate, std::string kernels::OpParams::*, int kernels::OpParams::*,
                              DType kernels::OpParams::*, kernels::BiasKind kernels::OpParams::*>;

struct ParamDesc {
    Param id = Param::Op;
    std::string name = {};  // canonical; the ops' checks name it so (kernels/param_error.hpp)
    ParamType type = ParamType::Int;
    ParamScope scope = ParamScope::Run;
    std::string unit = {};  // "elements", "blocks", "ranks", "us"; empty: none
    std::string word = {};  // the neutral word in messages ("K", "base-m"; kernels::ParamRef::word)
    // The default as text; empty when it is resolved per run (the op's, the variant's or the
    // profile's), which `help` then says. For a Run parameter it is RunRequest's own initializer
    // (tested).
    std::string default_text = {};
    std::optional<IntRange> range = {};     // Int: the accepted values
    std::vector<std::string> choices = {};  // Choice: the accepted values, the first the default
    std::string help = {};                  // one line or a few; --help shows it
    // command line: "--gk"; empty: not on the command line. Aliases: "-n", Iris's "--gemm_sms".
    std::string cli_flag = {};
    std::vector<std::string> cli_aliases = {};
    std::string cli_type_name = {};  // "INT", "FILE", ... (--help)
    std::string sweep_column = {};   // empty: not a column of a sweep row
    std::string json_key = {};       // empty: not a key of the results JSON
    std::string python_keyword = {}; // empty: not in the Python module
    std::vector<std::string> python_aliases = {};
    PythonPlace python_place = PythonPlace::None;
    // A config parameter the Python call also takes as a keyword of its own (sanitize=True).
    bool python_call_keyword = false;
    // The Python keyword and the API field mean the opposite of the parameter (`functional` is
    // not timing_only): a message that says to set the parameter says to clear them.
    bool python_and_api_opposite = false;
    std::string api_field = {};      // the C++ API's "OpConfig::base_m"; empty: none
    RunMember run_member = {};       // a Run parameter's member of RunRequest (named as the parameter)
    OpMember op_member = {};         // and of kernels::OpParams, when the op sees it
};

// Every parameter, in --help's order (immutable).
const std::vector<ParamDesc>& param_schema();

const ParamDesc& param_desc(Param p);

// By canonical name; null when there is none.
const ParamDesc* find_param(std::string_view name);

// The parameter a sweep column (normalized: lower case, '_'), a Python keyword or alias, or a
// command-line flag or alias names; null when none (a knob's name, or nothing).
const ParamDesc* param_of_sweep_column(std::string_view column);
const ParamDesc* param_of_python_keyword(std::string_view keyword);
const ParamDesc* param_of_cli_flag(std::string_view flag);

// Every name a command-line flag takes: the flag, then its aliases.
std::vector<std::string> cli_names(const ParamDesc& p);

// A knob's command-line flag: "--" and its name with '-' for '_' ("--chunk-tiles").
std::string knob_flag(const std::string& knob_name);

// Limits that are policy, not hardware (hardware numbers come from the profile). The schema's
// ranges are made of them.
inline constexpr int kMinRanks = 1;             // a cluster of one chip; an op asks for more (OpDesc::min_ranks)
inline constexpr int kMaxFunctionalRanks = 32;  // functional runs keep every rank's data in host memory
inline constexpr int kMaxTimingOnlyRanks = 768; // the largest cluster the timing model is meant for (CloudMatrix384's dies)
inline constexpr int kMaxBlocks = 4096;         // blocks beyond the core count run in waves, as on the device
inline constexpr int kMaxHostThreads = 1024;    // a context's host threads (0: one per host core)
inline constexpr int kMaxWarmupRuns = 100;      // --warmup-runs: each one simulates the views again
inline constexpr int kMaxJobs = 1024;           // --jobs: configurations of a sweep run at once

}  // namespace tandem::host
