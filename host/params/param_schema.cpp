// The parameter table. See param_schema.hpp.
#include "host/params/param_schema.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/registry.hpp"

namespace tandem::host {
namespace {

std::vector<ParamDesc> make_schema() {
    const std::string ops = [] {
        std::string names;
        for (const kernels::OpDesc* op : kernels::registered_ops()) names += (names.empty() ? "" : ", ") + op->name;
        return names;
    }();
    return {
        // ---- the machine ----
        ParamDesc{.id = Param::RunMode, .name = "run_mode", .type = ParamType::Choice, .scope = ParamScope::Program,
                  .word = "run mode", .default_text = "sim", .choices = {"sim", "npu"},
                  .help = "sim: run on the simulator; npu: refused (no Ascend NPU here, Tandem simulates one)",
                  .cli_flag = "--run-mode", .cli_aliases = {"-r"}, .cli_type_name = "MODE"},
        ParamDesc{.id = Param::Soc, .name = "soc", .type = ParamType::Text, .scope = ParamScope::Run, .word = "SoC",
                  .default_text = "Ascend910B1",
                  .help = "SoC to simulate: the profile sim/profiles/<SoC>.toml (Ascend910B1 .. Ascend910B4, "
                          "Ascend910_9362, Ascend910_9372). A sweep row's `profile` is a SoC or a .toml file",
                  .cli_flag = "--soc-version", .cli_aliases = {"-v"}, .cli_type_name = "SOC",
                  .sweep_column = "profile", .json_key = "soc", .python_keyword = "soc",
                  .python_place = PythonPlace::Context, .api_field = "ContextOptions::soc",
                  .run_member = &RunRequest::soc},
        ParamDesc{.id = Param::ProfileFile, .name = "profile_file", .type = ParamType::Path, .scope = ParamScope::Run,
                  .word = "profile file",
                  .help = "Hardware profile TOML file to use instead of the one named by -v (default: none)",
                  .cli_flag = "--profile", .cli_type_name = "FILE", .python_keyword = "profile",
                  .python_place = PythonPlace::Context, .api_field = "ContextOptions::profile_file",
                  .run_member = &RunRequest::profile_file},
        ParamDesc{.id = Param::Ranks, .name = "ranks", .type = ParamType::Int, .scope = ParamScope::Run,
                  .unit = "ranks", .word = "ranks", .default_text = "2",
                  .range = IntRange{kMinRanks, kMaxTimingOnlyRanks},
                  .help = fmt::format("Number of ranks (chips): {}..{}, up to {} with --timing-only; an op that "
                                      "communicates needs 2 or more (gemm runs on 1)",
                                      kMinRanks, kMaxFunctionalRanks, kMaxTimingOnlyRanks),
                  .cli_flag = "--n-ranks", .cli_aliases = {"-n"}, .cli_type_name = "INT", .sweep_column = "ranks",
                  .json_key = "ranks", .python_keyword = "num_ranks", .python_place = PythonPlace::Context,
                  .api_field = "ContextOptions::ranks",
                  .run_member = &RunRequest::ranks, .op_member = &kernels::OpParams::ranks},
        // ---- the shape, the tiles and the blocks ----
        ParamDesc{.id = Param::M, .name = "m", .type = ParamType::Int, .scope = ParamScope::Run, .unit = "elements",
                  .word = "M", .default_text = "2048",
                  .help = "Global M (rows of A and C); a multiple of n*base-m (gemm pto_performance: 6144^3 unless "
                          "--gm/--gk/--gn are given)",
                  .cli_flag = "--gm", .cli_type_name = "INT", .sweep_column = "m", .json_key = "m",
                  .python_keyword = "m", .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::m, .op_member = &kernels::OpParams::m},
        ParamDesc{.id = Param::K, .name = "k", .type = ParamType::Int, .scope = ParamScope::Run, .unit = "elements",
                  .word = "K", .default_text = "2048", .help = "Global K; a multiple of base-n", .cli_flag = "--gk",
                  .cli_type_name = "INT", .sweep_column = "k", .json_key = "k", .python_keyword = "k",
                  .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::k, .op_member = &kernels::OpParams::k},
        ParamDesc{.id = Param::N, .name = "n", .type = ParamType::Int, .scope = ParamScope::Run, .unit = "elements",
                  .word = "N", .default_text = "1024", .help = "Global N; a multiple of base-n", .cli_flag = "--gn",
                  .cli_type_name = "INT", .sweep_column = "n", .json_key = "n", .python_keyword = "n",
                  .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::n, .op_member = &kernels::OpParams::n},
        ParamDesc{.id = Param::BaseM, .name = "base_m", .type = ParamType::Int, .scope = ParamScope::Run,
                  .unit = "elements", .word = "base-m", .default_text = "128",
                  .help = "Tile rows (transfer tile and output tile); a multiple of the cube fractal (16)",
                  .cli_flag = "--base-m", .cli_type_name = "INT", .sweep_column = "base_m", .json_key = "base_m",
                  .python_keyword = "base_m", .python_aliases = {"block_size_m"}, .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::base_m",
                  .run_member = &RunRequest::base_m, .op_member = &kernels::OpParams::base_m},
        ParamDesc{.id = Param::BaseN, .name = "base_n", .type = ParamType::Int, .scope = ParamScope::Run,
                  .unit = "elements", .word = "base-n", .default_text = "256",
                  .help = "Tile columns; divisible by 4 (the cube's K step is base-n/4) and a multiple of 16; the "
                          "tile must fit L0C, L0A/L0B, L1 and UB",
                  .cli_flag = "--base-n", .cli_type_name = "INT", .sweep_column = "base_n", .json_key = "base_n",
                  .python_keyword = "base_n", .python_aliases = {"block_size_n"}, .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::base_n",
                  .run_member = &RunRequest::base_n, .op_member = &kernels::OpParams::base_n},
        ParamDesc{.id = Param::ComputeBlocks, .name = "compute_blocks", .type = ParamType::Int,
                  .scope = ParamScope::Run, .unit = "blocks", .word = "compute blocks", .range = IntRange{1, kMaxBlocks},
                  .help = fmt::format("Compute kernel (AIC) blocks, the GEMM's (Iris's gemm_sms), 1..{}; more blocks "
                                      "than cores run in waves (default: the profile's AIC core count, 24 on "
                                      "Ascend910B1, unless the variant says otherwise)",
                                      kMaxBlocks),
                  .cli_flag = "--compute-blocks", .cli_aliases = {"--gemm_sms"}, .cli_type_name = "INT",
                  .sweep_column = "compute_blocks", .json_key = "compute_blocks", .python_keyword = "compute_blocks",
                  .python_aliases = {"gemm_sms", "num_sms"}, .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::compute_blocks",
                  .run_member = &RunRequest::compute_blocks, .op_member = &kernels::OpParams::compute_blocks},
        ParamDesc{.id = Param::CommBlocks, .name = "comm_blocks", .type = ParamType::Int, .scope = ParamScope::Run,
                  .unit = "blocks", .word = "comm blocks", .range = IntRange{1, kMaxBlocks},
                  .help = fmt::format("Comm kernel (AIV) blocks (Iris's comm_sms), 1..{}; more blocks than cores run "
                                      "in waves (default: the profile's AIV core count, 48 on Ascend910B1, unless the "
                                      "variant says otherwise)",
                                      kMaxBlocks),
                  .cli_flag = "--comm-blocks", .cli_aliases = {"--comm_sms"}, .cli_type_name = "INT",
                  .sweep_column = "comm_blocks", .json_key = "comm_blocks", .python_keyword = "comm_blocks",
                  .python_aliases = {"comm_sms"}, .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::comm_blocks",
                  .run_member = &RunRequest::comm_blocks, .op_member = &kernels::OpParams::comm_blocks},
        // ---- the op ----
        ParamDesc{.id = Param::Op, .name = "op", .type = ParamType::Text, .scope = ParamScope::Run, .word = "op",
                  .default_text = kernels::registered_ops().front()->name,
                  .help = fmt::format("The op to run: {} (--list-ops shows them with their variants)", ops),
                  .cli_flag = "--op", .cli_type_name = "OP", .sweep_column = "op", .json_key = "op",
                  .python_keyword = "op", .python_place = PythonPlace::Call, .api_field = "Ops::run(op)",
                  .run_member = &RunRequest::op},
        ParamDesc{.id = Param::Variant, .name = "variant", .type = ParamType::Text, .scope = ParamScope::Run,
                  .word = "variant", .help = "The op's variant (default: the op's first; --list-ops)",
                  .cli_flag = "--variant", .cli_type_name = "NAME", .sweep_column = "variant", .json_key = "variant",
                  .python_keyword = "variant", .python_place = PythonPlace::Config, .api_field = "OpConfig::variant",
                  .run_member = &RunRequest::variant, .op_member = &kernels::OpParams::variant},
        ParamDesc{.id = Param::Schedule, .name = "schedule", .type = ParamType::Text, .scope = ParamScope::Run,
                  .word = "schedule",
                  .help = "GEMM schedule of the cube blocks: data_parallel, stream_k, hybrid where the variant offers "
                          "it (default: the variant's first)",
                  .cli_flag = "--schedule", .cli_type_name = "NAME", .sweep_column = "schedule",
                  .json_key = "schedule", .python_keyword = "schedule", .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::schedule",
                  .run_member = &RunRequest::schedule, .op_member = &kernels::OpParams::schedule},
        ParamDesc{.id = Param::Dtype, .name = "dtype", .type = ParamType::Choice, .scope = ParamScope::Run,
                  .word = "dtype", .default_text = "fp16", .choices = {"fp16", "bf16", "fp32", "int8"},
                  .help = "Input dtype of A, B and the bias: fp16, bf16, fp32 or int8 where the variant takes it (fp32 and int8: the Iris-family ops and gemm tiled; int8 x int8 sums in int32, an fp32 output, no bias)",
                  .cli_flag = "--dtype", .cli_type_name = "DTYPE", .sweep_column = "dtype", .json_key = "dtype",
                  .python_keyword = "dtype", .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::dtype, .op_member = &kernels::OpParams::dtype},
        ParamDesc{.id = Param::OutDtype, .name = "out_dtype", .type = ParamType::Choice, .scope = ParamScope::Run,
                  .word = "output dtype", .choices = {"fp32", "fp16", "bf16"},
                  .help = "Output dtype: fp32 or the input dtype where the variant offers it (default: the "
                          "variant's first)",
                  .cli_flag = "--out-dtype", .cli_type_name = "DTYPE", .sweep_column = "out_dtype",
                  .json_key = "out_dtype", .python_keyword = "out_dtype", .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::out_dtype, .op_member = &kernels::OpParams::out_dtype},
        ParamDesc{.id = Param::Bias, .name = "bias", .type = ParamType::Choice, .scope = ParamScope::Run,
                  .word = "bias", .default_text = "none", .choices = {"none", "m", "n"},
                  .help = "Bias vector added once: none, m (one per row) or n (one per column)", .cli_flag = "--bias",
                  .cli_type_name = "KIND", .sweep_column = "bias", .json_key = "bias", .python_keyword = "bias",
                  .python_place = PythonPlace::Tensors,
                  .run_member = &RunRequest::bias, .op_member = &kernels::OpParams::bias},
        ParamDesc{.id = Param::CommMode, .name = "comm_mode", .type = ParamType::Choice, .scope = ParamScope::Run,
                  .word = "comm mode", .choices = {"mesh", "ring"},
                  .help = "mesh: direct sends to every peer (the published kernel); ring: forwarding ring, where the "
                          "variant offers it (default: the variant's first, mesh)",
                  .cli_flag = "--comm-mode", .cli_type_name = "MODE", .sweep_column = "comm_mode",
                  .json_key = "comm_mode", .python_keyword = "comm_mode", .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::comm_mode",
                  .run_member = &RunRequest::comm_mode, .op_member = &kernels::OpParams::comm_mode},
        ParamDesc{.id = Param::Fault, .name = "fault", .type = ParamType::Text, .scope = ParamScope::Run,
                  .word = "fault",
                  .help = "Tests only: a deliberate bug the variant lists (VariantDesc::faults), to prove that "
                          "verification catches it",
                  .python_keyword = "fault", .python_place = PythonPlace::Config, .api_field = "OpConfig::fault",
                  .run_member = &RunRequest::fault, .op_member = &kernels::OpParams::fault},
        // ---- the data and the checks ----
        ParamDesc{.id = Param::TimingOnly, .name = "timing_only", .type = ParamType::Flag, .scope = ParamScope::Run,
                  .word = "timing-only", .default_text = "false",
                  .help = "Timing model only: no data, no math, no verification (large shapes, many ranks) "
                          "(default: off, functional; sweep rows: on unless a row says false). The results' "
                          "data_mode; the API's and Python's `functional` is its opposite",
                  .cli_flag = "--timing-only", .sweep_column = "timing_only", .json_key = "data_mode",
                  .python_keyword = "functional", .python_place = PythonPlace::Context,
                  .python_and_api_opposite = true, .api_field = "ContextOptions::functional",
                  .run_member = &RunRequest::timing_only},
        ParamDesc{.id = Param::Sanitize, .name = "sanitize", .type = ParamType::Flag, .scope = ParamScope::Run,
                  .word = "sanitize", .default_text = "false",
                  .help = "Check the kernels' synchronisation (unsynchronised reads, flags raised before their data, "
                          "stale flags, blocks that can never be scheduled, ranks that disagree, out-of-bounds "
                          "accesses); print each violation and exit 4 (default: off)",
                  .cli_flag = "--sanitize", .python_keyword = "sanitize", .python_place = PythonPlace::Config,
                  .python_call_keyword = true, .api_field = "OpConfig::sanitize",
                  .run_member = &RunRequest::sanitize},
        ParamDesc{.id = Param::WarmupRuns, .name = "warmup_runs", .type = ParamType::Int, .scope = ParamScope::Run,
                  .unit = "runs", .word = "warm-up runs", .default_text = "0", .range = IntRange{0, kMaxWarmupRuns},
                  .help = fmt::format("Run each view's kernels this many times (timing-only, not reported) before the "
                                      "view is timed, as a host that warms up does: the chip's L2 carries over from "
                                      "them; 0..{} (default: 0, every view starts from what the views before it left)",
                                      kMaxWarmupRuns),
                  .cli_flag = "--warmup-runs", .cli_type_name = "INT", .sweep_column = "warmup_runs",
                  .json_key = "warmup_runs", .python_keyword = "warmup_runs", .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::warmup_runs",
                  .run_member = &RunRequest::warmup_runs},
        // ---- a call of the API ----
        ParamDesc{.id = Param::AllViews, .name = "all_views", .type = ParamType::Flag, .scope = ParamScope::Call,
                  .word = "all views", .default_text = "false",
                  .help = "Also time the compute-only and sequential views (timing-only launches) of the call",
                  .python_keyword = "all_views", .python_place = PythonPlace::Config,
                  .api_field = "OpConfig::all_views"},
        ParamDesc{.id = Param::AsyncOp, .name = "async_op", .type = ParamType::Flag, .scope = ParamScope::Call,
                  .word = "async", .default_text = "false",
                  .help = "Return once the kernels are launched; Context::barrier() completes the call",
                  .python_keyword = "async_op", .python_place = PythonPlace::Call, .api_field = "Ops::run(async_op)"},
        ParamDesc{.id = Param::HostThreads, .name = "host_threads", .type = ParamType::Int, .scope = ParamScope::Call,
                  .unit = "threads", .word = "host threads", .default_text = "0", .range = IntRange{0, kMaxHostThreads},
                  .help = "Host threads the context's simulation may keep busy: 0..1024 (0: one per host core; "
                          "results never depend on it, only how fast they come)",
                  .python_keyword = "host_threads", .python_place = PythonPlace::Context,
                  .api_field = "ContextOptions::host_threads"},
        // ---- the program ----
        ParamDesc{.id = Param::Help, .name = "help", .type = ParamType::Flag, .scope = ParamScope::Program,
                  .word = "help", .help = "Print this help and exit", .cli_flag = "--help", .cli_aliases = {"-h"}},
        ParamDesc{.id = Param::ListOps, .name = "list_ops", .type = ParamType::Flag, .scope = ParamScope::Program,
                  .word = "list ops", .help = "Print the ops, their variants, knobs and constraints, and exit (with --json FILE: as JSON, for "
                          "scripts; --json /dev/stdout prints it)",
                  .cli_flag = "--list-ops"},
        ParamDesc{.id = Param::Json, .name = "json", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "results file",
                  .help = "Write the results JSON (docs/RESULTS.md; its keys: docs/PARAMETERS.md) to FILE (default: none)",
                  .cli_flag = "--json", .cli_type_name = "FILE"},
        ParamDesc{.id = Param::Trace, .name = "trace", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "trace file",
                  .help = "Write a Chrome Trace Event JSON of the pipelined run (an API call: of the call) to FILE (default: none)",
                  .cli_flag = "--trace", .cli_type_name = "FILE", .python_keyword = "trace",
                  .python_place = PythonPlace::Config, .api_field = "OpConfig::trace"},
        ParamDesc{.id = Param::TraceRanks, .name = "trace_ranks", .type = ParamType::Text,
                  .scope = ParamScope::Program, .word = "trace ranks",
                  .help = "Keep only these ranks in the trace, e.g. 0,3, or all; only their instructions are held while the run "
                          "simulates, so a trace of one rank of many is faster and smaller (default: on the command line rank 0 "
                          "and the slowest other rank, in an API call every rank)",
                  .cli_flag = "--trace-ranks", .cli_type_name = "LIST", .python_keyword = "trace_ranks",
                  .python_place = PythonPlace::Config, .api_field = "OpConfig::trace_ranks"},
        ParamDesc{.id = Param::TraceWindowUs, .name = "trace_window_us", .type = ParamType::Text,
                  .scope = ParamScope::Program, .unit = "us", .word = "trace window",
                  .help = "Keep only trace events overlapping START:END us from the pipelined view's start "
                          "(default: all)",
                  .cli_flag = "--trace-window-us", .cli_type_name = "START:END", .python_keyword = "trace_window_us",
                  .python_place = PythonPlace::Config, .api_field = "OpConfig::trace_window_us"},
        ParamDesc{.id = Param::OutDir, .name = "out_dir", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "output directory", .default_text = "out",
                  .help = "Directory for output_rank<r>.bin (and the inputs with --write-inputs)",
                  .cli_flag = "--out-dir", .cli_type_name = "DIR"},
        ParamDesc{.id = Param::WriteInputs, .name = "write_inputs", .type = ParamType::Flag,
                  .scope = ParamScope::Program, .word = "write inputs",
                  .help = "Also write the seed's input files pe_<r>_a.bin, pe_<r>_b.bin, golden.bin to --out-dir "
                          "(ops that keep the seed's files; default: off)",
                  .cli_flag = "--write-inputs"},
        ParamDesc{.id = Param::InputDir, .name = "input_dir", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "input directory",
                  .help = "Read the seed's input files (pe_<r>_a.bin, pe_<r>_b.bin, golden.bin) from DIR instead of "
                          "generating them (ops that keep the seed's files; default: generate)",
                  .cli_flag = "--input-dir", .cli_type_name = "DIR"},
        ParamDesc{.id = Param::Quiet, .name = "quiet", .type = ParamType::Flag, .scope = ParamScope::Program,
                  .word = "quiet", .help = "Print only errors and the final summary: no progress lines either (default: off)",
                  .cli_flag = "--quiet"},
        ParamDesc{.id = Param::Sweep, .name = "sweep", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "sweep file",
                  .help = "Run every row of FILE, a CSV with a header row or a JSON array of objects; columns ranks, "
                          "m, k, n (required) and any parameter's column (docs/SWEEPS.md; timing_only defaults to "
                          "true: sweeps are timing-only unless a row says false); the other flags are the rows' "
                          "defaults. Under mpirun -n P the rows are spread over the P processes and rank 0 writes "
                          "the files (docs/SWEEPS.md)",
                  .cli_flag = "--sweep", .cli_type_name = "FILE"},
        ParamDesc{.id = Param::Tune, .name = "tune", .type = ParamType::Flag, .scope = ParamScope::Program,
                  .word = "tune",
                  .help = "Search chunk size, base tile and block split for the shape given (timing-only) and report "
                          "the best configuration by pipelined time next to the default (default: off). Under mpirun "
                          "-n P the configurations are spread over the P processes; write it --tune=true there "
                          "(mpirun takes a bare --tune X as its own option)",
                  .cli_flag = "--tune"},
        ParamDesc{.id = Param::SweepOut, .name = "sweep_out", .type = ParamType::Path, .scope = ParamScope::Program,
                  .word = "results prefix",
                  .help = "Results of --sweep/--tune: PREFIX.csv and PREFIX.json (default: out/sweep, out/tune with "
                          "--tune)",
                  .cli_flag = "--sweep-out", .cli_type_name = "PREFIX"},
        ParamDesc{.id = Param::Jobs, .name = "jobs", .type = ParamType::Int, .scope = ParamScope::Program,
                  .unit = "configurations", .word = "jobs", .range = IntRange{1, kMaxJobs},
                  .help = "Configurations of --sweep/--tune run at once (default: the host's core count)",
                  .cli_flag = "--jobs", .cli_type_name = "INT"},
    };
}

std::string lower_underscored(std::string_view text) {
    std::string s(text);
    for (char& c : s) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

const std::vector<ParamDesc>& param_schema() {
    static const std::vector<ParamDesc> schema = make_schema();
    return schema;
}

const ParamDesc& param_desc(Param p) {
    for (const ParamDesc& d : param_schema()) {
        if (d.id == p) return d;
    }
    throw std::logic_error("param_desc: a Param without an entry in the schema");
}

const ParamDesc* find_param(std::string_view name) {
    for (const ParamDesc& d : param_schema()) {
        if (d.name == name) return &d;
    }
    return nullptr;
}

const ParamDesc* param_of_sweep_column(std::string_view column) {
    const std::string c = lower_underscored(column);
    for (const ParamDesc& d : param_schema()) {
        if (!d.sweep_column.empty() && d.sweep_column == c) return &d;
    }
    return nullptr;
}

const ParamDesc* param_of_python_keyword(std::string_view keyword) {
    for (const ParamDesc& d : param_schema()) {
        if (d.python_keyword.empty()) continue;
        if (d.python_keyword == keyword) return &d;
        if (std::find(d.python_aliases.begin(), d.python_aliases.end(), keyword) != d.python_aliases.end()) return &d;
    }
    return nullptr;
}

const ParamDesc* param_of_cli_flag(std::string_view flag) {
    for (const ParamDesc& d : param_schema()) {
        for (const std::string& name : cli_names(d)) {
            if (name == flag) return &d;
        }
    }
    return nullptr;
}

std::vector<std::string> cli_names(const ParamDesc& p) {
    std::vector<std::string> names;
    if (p.cli_flag.empty()) return names;
    names.push_back(p.cli_flag);
    names.insert(names.end(), p.cli_aliases.begin(), p.cli_aliases.end());
    return names;
}

std::string knob_flag(const std::string& knob_name) {
    std::string flag = "--" + knob_name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

}  // namespace tandem::host
