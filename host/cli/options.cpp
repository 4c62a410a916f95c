// Command line parsing (CLI11) and validation of a RunConfig. See options.hpp.
#include "host/cli/options.hpp"

#include "host/run/op_inputs.hpp"
#include "sim/trace/chrome_trace.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

const kernels::OpDesc* known_op(const RunConfig& cfg);

constexpr std::int64_t kFp32Bytes = 4;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Values CLI11 cannot hold in RunConfig directly (checked strings mapped after parsing).
struct ParseTargets {
    RunConfig cfg;
    std::string run_mode = "sim";
    std::string comm_mode = "mesh";
    std::string trace_ranks;
    std::string trace_window;
    std::map<std::string, std::optional<int>> knobs;  // every registered knob's flag
};

// CLI11 converts integers with strtoll(base 0), so "0100" would silently mean 64 and "0x10"
// 16. Sizes are decimal: accept only [+-]digits, strip leading zeros, and reject values that do
// not fit an int, with a message that says so (CLI11's own is "Could not convert").
CLI::Validator decimal_int() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::string_view digits = text;
            const bool negative = !digits.empty() && digits.front() == '-';
            if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
            if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                               [](unsigned char c) { return std::isdigit(c) != 0; })) {
                return fmt::format("'{}' is not a whole decimal number", text);
            }
            digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size() - 1));
            if (digits.size() > 10 || std::stoll(std::string(digits)) > INT_MAX) {
                return fmt::format("{} is out of range (at most {})", text, INT_MAX);
            }
            text = (negative ? "-" : "") + std::string(digits);
            return {};
        },
        "", "decimal integer");
}

// A CLI11 file/directory check without its ":FILE"/":DIR" suffix in the help (the type name says it).
CLI::Validator without_description(CLI::Validator v) { return v.description(""); }

void build_app(CLI::App& app, ParseTargets& t) {
    RunConfig& c = t.cfg;
    app.name("allgather_gemm");
    app.description(
        "Tandem: AllGather+GEMM on a simulated Ascend NPU cluster (the pto-isa allgather_gemm seed).\n"
        "Each rank holds an M-slice of A (fp16), B (K x N fp16) is replicated, every rank computes\n"
        "C = A*B (fp32). Runs three views (compute-only, sequential, pipelined), verifies C against\n"
        "an OpenBLAS golden and prints the seed's summary. Times are simulated microseconds.\n"
        "run.sh passes its flags here.");
    app.get_formatter()->column_width(34);
    app.set_help_flag("-h,--help", "Print this help and exit");

    app.add_option("-r,--run-mode", t.run_mode,
                   "sim: run on the simulator; npu: refused (no Ascend NPU here, Tandem simulates one)")
        ->check(CLI::IsMember({"sim", "npu"}))
        ->type_name("MODE")
        ->capture_default_str();
    app.add_option("-v,--soc-version", c.soc,
                   "SoC to simulate: the profile sim/profiles/<SoC>.toml (Ascend910B1 .. Ascend910B4)")
        ->type_name("SOC")
        ->capture_default_str();
    app.add_option("--profile", c.profile_file,
                   "Hardware profile TOML file to use instead of the one named by -v (default: none)")
        ->check(without_description(CLI::ExistingFile))
        ->type_name("FILE");
    app.add_option("-n,--n-ranks", c.ranks,
                   fmt::format("Number of ranks (chips): {}..{}, up to {} with --timing-only; an op that "
                               "communicates needs 2 or more (gemm runs on 1)",
                               kMinRanks, kMaxFunctionalRanks, kMaxTimingOnlyRanks))
        ->transform(decimal_int())
        ->capture_default_str();
    app.add_option("--gm", c.m, "Global M (rows of A and C); a multiple of n*base-m (gemm pto_performance: "
                                "6144^3 unless --gm/--gk/--gn are given)")
        ->transform(decimal_int())
        ->capture_default_str();
    app.add_option("--gk", c.k, "Global K; a multiple of base-n")->transform(decimal_int())->capture_default_str();
    app.add_option("--gn", c.n, "Global N; a multiple of base-n")->transform(decimal_int())->capture_default_str();
    app.add_option("--base-m", c.base_m,
                   "Tile rows (transfer tile and output tile); a multiple of the cube fractal (16)")
        ->transform(decimal_int())
        ->capture_default_str();
    app.add_option("--base-n", c.base_n,
                   "Tile columns; divisible by 4 (the cube's K step is base-n/4) and a multiple of 16; "
                   "the tile must fit L0C, L0A/L0B, L1 and UB")
        ->transform(decimal_int())
        ->capture_default_str();
    app.add_option("--compute-blocks", c.compute_blocks,
                   fmt::format("Compute kernel (AIC) blocks, 1..{}; more blocks than cores run in waves "
                               "(default: the profile's AIC core count, 24 on Ascend910B1)",
                               kMaxBlocks))
        ->transform(decimal_int());
    app.add_option("--comm-blocks", c.comm_blocks,
                   fmt::format("Comm kernel (AIV) blocks, 1..{}; more blocks than cores run in waves "
                               "(default: the profile's AIV core count, 48 on Ascend910B1)",
                               kMaxBlocks))
        ->transform(decimal_int());
    app.add_option("--op", c.op, "The op to run (--list-ops shows them all with their variants)")
        ->type_name("OP")
        ->capture_default_str();
    app.add_option("--variant", c.variant, "The op's variant (default: the op's first; --list-ops)")->type_name("NAME");
    app.add_option("--schedule", c.schedule,
                   "GEMM schedule of the cube blocks: data_parallel, stream_k, hybrid where the variant offers it "
                   "(default: the variant's first)")
        ->type_name("NAME");
    app.add_option("--dtype", c.dtype, "Input dtype of A, B and the bias: fp16 or bf16 where the variant takes it")
        ->type_name("DTYPE")
        ->capture_default_str();
    app.add_option("--out-dtype", c.out_dtype,
                   "Output dtype: fp32 or the input dtype where the variant offers it (default: the variant's first)")
        ->type_name("DTYPE");
    app.add_option("--bias", c.bias, "Bias vector added once: none, m (one per row) or n (one per column)")
        ->check(CLI::IsMember({"none", "m", "n"}))
        ->type_name("KIND")
        ->capture_default_str();
    app.add_flag("--list-ops", c.list_ops, "Print the ops, their variants, knobs and constraints, and exit");
    for (const kernels::KnobDesc& knob : kernels::all_knobs()) {
        std::string flag = "--" + knob.name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        std::string names = flag;
        for (const std::string& alias : knob.aliases) names += "," + alias;
        app.add_option(names, t.knobs[knob.name], knob.doc)->transform(decimal_int())->type_name("INT");
    }
    app.add_option("--comm-mode", t.comm_mode,
                   "mesh: direct sends to every peer (the published kernel); ring: forwarding ring variant")
        ->check(CLI::IsMember({"mesh", "ring"}))
        ->type_name("MODE")
        ->capture_default_str();
    app.add_flag("--timing-only", c.timing_only,
                 "Timing model only: no data, no math, no verification (large shapes, many ranks) "
                 "(default: off, functional)");
    app.add_option("--json", c.json_file, "Write the results JSON (SPEC.md contract) to FILE (default: none)")
        ->type_name("FILE");
    app.add_option("--trace", c.trace_file,
                   "Write a Chrome Trace Event JSON of the pipelined run to FILE (default: none)")
        ->type_name("FILE");
    app.add_option("--trace-ranks", t.trace_ranks,
                   "Keep only these ranks in the trace, e.g. 0,3 (default: all)")
        ->type_name("LIST");
    app.add_option("--trace-window-us", t.trace_window,
                   "Keep only trace events overlapping START:END us from the pipelined view's start (default: all)")
        ->type_name("START:END");
    app.add_option("--out-dir", c.out_dir,
                   "Directory for output_rank<r>.bin (and the inputs with --write-inputs)")
        ->type_name("DIR")
        ->capture_default_str();
    app.add_flag("--write-inputs", c.write_inputs,
                 "Also write the seed's input files pe_<r>_a.bin, pe_<r>_b.bin, golden.bin to --out-dir "
                 "(default: off)");
    app.add_option("--input-dir", c.input_dir,
                   "Read the seed's input files (pe_<r>_a.bin, pe_<r>_b.bin, golden.bin) from DIR instead "
                   "of generating them (default: generate)")
        ->check(without_description(CLI::ExistingDirectory))
        ->type_name("DIR");
    app.add_flag("--quiet", c.quiet, "Print only errors and the final summary (default: off)");
    app.add_flag("--sanitize", c.sanitize,
                 "Check the kernels' synchronisation (unsynchronised reads, flags raised before their data, "
                 "stale flags, blocks that can never be scheduled, ranks that disagree, out-of-bounds accesses); "
                 "print each violation and exit 4 (default: off)");
    app.add_option("--sweep", c.sweep_file,
                   "Run every row of FILE, a CSV with a header row or a JSON array of objects; columns ranks, m, "
                   "k, n (required), base_m, base_n, compute_blocks, comm_blocks, comm_mode, profile (SoC or "
                   ".toml), chunk_tiles, timing_only (default: true: sweeps are timing-only unless a row says "
                   "false); other flags (-v, tile, blocks, --comm-mode) are the rows' defaults. Under mpirun -n P the "
                   "rows are spread over the P processes and rank 0 writes the files (README: Sweeps over many hosts)")
        ->type_name("FILE");
    app.add_flag("--tune", c.tune,
                 "Search chunk size, base tile and block split for the shape given (timing-only) and report "
                 "the best configuration by pipelined time next to the default (default: off). Under mpirun -n P "
                 "the configurations are spread over the P processes; write it --tune=true there (mpirun takes a "
                 "bare --tune X as its own option)");
    app.add_option("--sweep-out", c.sweep_out,
                   "Results of --sweep/--tune: PREFIX.csv and PREFIX.json (default: out/sweep, out/tune with --tune)")
        ->type_name("PREFIX");
    app.add_option("--jobs", c.jobs,
                   "Configurations of --sweep/--tune run at once (default: the host's core count)")
        ->transform(decimal_int());

    app.footer(
        "Examples:\n"
        "  -r sim -v Ascend910B1 -n 2 --gm 2048 --gk 2048 --gn 1024\n"
        "  -r sim -v Ascend910B1 -n 8 --gm 16384 --gk 4096 --gn 4096 --timing-only --json r.json\n"
        "  --op allgather_gemm -n 4 --sanitize\n"
        "Exit codes: 0 done, 1 verification failed, 2 error, 4 --sanitize found a violation.\n"
        "  --sweep rows.csv --sweep-out out/sweep --jobs 2\n"
        "  -n 8 --gm 16384 --gk 4096 --gn 4096 --tune");
}

[[noreturn]] void fail(const std::string& message) { throw tandem::SimError(message); }

void check_ranks(const RunConfig& c) {
    const kernels::OpDesc* op = known_op(c);
    const int least = std::max(kMinRanks, op != nullptr ? op->min_ranks : 2);
    if (c.ranks < least) {
        fail(fmt::format("-n {}: op {} needs at least {} ranks{}; nearest valid: {}", c.ranks, c.op, least,
                         least == 2 ? " (one rank is not a collective)" : "", least));
    }
    if (c.timing_only && c.ranks > kMaxTimingOnlyRanks) {
        fail(fmt::format("-n {}: timing-only runs support at most {} ranks; nearest valid: {}", c.ranks,
                         kMaxTimingOnlyRanks, kMaxTimingOnlyRanks));
    }
    if (!c.timing_only && c.ranks > kMaxFunctionalRanks) {
        fail(fmt::format("-n {}: functional runs support at most {} ranks (every rank's data is held in host "
                         "memory); nearest valid: {}, or add --timing-only (up to {} ranks)",
                         c.ranks, kMaxFunctionalRanks, kMaxFunctionalRanks, kMaxTimingOnlyRanks));
    }
    // The forwarding ring needs a neighbour to forward to: at least 2 ranks, which the check
    // above already guarantees for every mode.
}

void check_blocks(const char* flag, const std::optional<int>& blocks, const char* core_kind, int cores) {
    if (blocks && (*blocks < 1 || *blocks > kMaxBlocks)) {
        fail(fmt::format("{} {}: must be in 1..{} (blocks beyond the {} {} cores run in waves); nearest valid: {}",
                         flag, *blocks, kMaxBlocks, cores, core_kind, std::clamp(*blocks, 1, kMaxBlocks)));
    }
}

void check_modes(const RunConfig& c) {
    if (c.timing_only && !c.input_dir.empty()) {
        fail(fmt::format("--input-dir {} with --timing-only: a timing-only run reads no data; drop one of the two",
                         c.input_dir));
    }
    if (c.timing_only && c.write_inputs) {
        fail("--write-inputs with --timing-only: a timing-only run has no data to write; drop one of the two");
    }
}

// The largest M that is a multiple of `step`, at most `m_now`, with bytes(M) <= limit (bytes
// grows with M); nullopt when even `step` is too large.
std::optional<std::int64_t> largest_m_within(const RunConfig& c, const std::function<double(const RunConfig&)>& bytes,
                                             double limit, std::int64_t step) {
    RunConfig probe = c;
    auto fits = [&](std::int64_t m) {
        probe.m = static_cast<int>(m);
        return bytes(probe) <= limit;
    };
    std::int64_t lo = 0;  // multiples of step: lo fits (0 = none known), hi does not
    std::int64_t hi = std::min<std::int64_t>(c.m, INT_MAX) / step + 1;
    if (!fits(step)) return std::nullopt;
    lo = 1;
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (fits(mid * step) ? lo : hi) = mid;
    }
    return lo * step;
}

std::string shape_flags(const RunConfig& c) {
    return fmt::format("-n {} --gm {} --gk {} --gn {}", c.ranks, c.m, c.k, c.n);
}

void check_memory(const RunConfig& c, const KernelBufferLimits& lim, std::int64_t host_limit) {
    const std::int64_t step = std::int64_t{c.ranks} * c.base_m;  // a multiple of every op's M granule
    const double chip_bytes = chip_gm_bytes(c);
    if (chip_bytes > static_cast<double>(lim.gm_bytes)) {
        const auto m_ok = largest_m_within(c, chip_gm_bytes, static_cast<double>(lim.gm_bytes), step);
        fail(fmt::format("{}: each chip's HBM would hold the op's inputs, output and workspace = {:.1f} GiB, more "
                         "than the {:.1f} GiB of profile {}; nearest valid: {}",
                         shape_flags(c), chip_bytes / kGiB, lim.gm_bytes / kGiB, lim.profile_name,
                         m_ok ? fmt::format("--gm {}", *m_ok) : std::string("smaller --gk/--gn")));
    }
    if (c.timing_only) return;
    const double host_bytes = functional_host_bytes(c);
    if (host_bytes > static_cast<double>(host_limit)) {
        const auto m_ok = largest_m_within(c, functional_host_bytes, static_cast<double>(host_limit), step);
        fail(fmt::format("{}: a functional run would hold {:.1f} GiB of host memory (every chip's inputs, output and "
                         "workspace, plus the inputs and the golden), above the {:.1f} GiB limit; add --timing-only "
                         "(timing model only, no data){}",
                         shape_flags(c), host_bytes / kGiB, host_limit / kGiB,
                         m_ok ? fmt::format(", or nearest valid: --gm {}", *m_ok) : std::string()));
    }
}

// Output files are written at the end of a possibly long run: refuse a missing directory now.
void check_output_dir(const char* flag, const std::string& file) {
    if (file.empty()) return;
    const std::filesystem::path parent = std::filesystem::path(file).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
        fail(fmt::format("{} {}: directory '{}' does not exist; create it or choose another path", flag, file,
                         parent.string()));
    }
}

// --sweep and --tune run many configurations: flags that belong to one run are refused with them.
void check_batch_flags(const CLI::App& app, const RunConfig& c) {
    const bool sweep = !c.sweep_file.empty();
    if (sweep && c.tune) fail("--sweep with --tune: --tune searches one shape, --sweep runs a file's rows; use one");
    if (!sweep && !c.tune) {
        for (const char* flag : {"--sweep-out", "--jobs"}) {
            if (app.count(flag) > 0) fail(fmt::format("{} applies to --sweep and --tune only", flag));
        }
        return;
    }
    const char* mode = sweep ? "--sweep" : "--tune";
    for (const char* flag : {"--json", "--trace", "--trace-ranks", "--trace-window-us", "--write-inputs", "--input-dir"}) {
        if (app.count(flag) > 0) {
            fail(fmt::format("{} with {}: {} applies to a single run; the results go to --sweep-out PREFIX.csv and "
                             "PREFIX.json",
                             flag, mode, flag));
        }
    }
    if (sweep) {
        for (const char* flag : {"--n-ranks", "--gm", "--gk", "--gn"}) {
            if (app.count(flag) > 0) {
                fail(fmt::format("{} with --sweep: each row gives its shape (columns ranks, m, k, n)",
                                 std::string_view(flag) == "--n-ranks" ? "-n" : flag));
            }
        }
    }
    if (c.jobs && (*c.jobs < 1 || *c.jobs > kMaxJobs)) {
        fail(fmt::format("--jobs {}: must be in 1..{}; nearest valid: {}", *c.jobs, kMaxJobs,
                         std::clamp(*c.jobs, 1, kMaxJobs)));
    }
}

// The op a config names: the one it carries (an API user's op) or the registry's of that name;
// null when there is none (the callers that must have one say so).
const kernels::OpDesc* known_op(const RunConfig& cfg) {
    if (cfg.op_desc != nullptr) return cfg.op_desc;
    const auto& ops = kernels::registered_ops();
    const auto op = std::find_if(ops.begin(), ops.end(), [&](const kernels::OpDesc* o) { return o->name == cfg.op; });
    return op != ops.end() ? *op : nullptr;
}

}  // namespace

KernelBufferLimits buffer_limits_of(const tandem::Profile& p) {
    KernelBufferLimits lim;
    lim.profile_name = p.name;
    lim.aic_cores = p.chip.aic_cores;
    lim.aiv_cores = p.chip.aiv_cores;
    lim.cube_fractal = p.pipes.cube_fractal;
    lim.l1_bytes = p.chip.l1_bytes;
    lim.l0a_bytes = p.chip.l0a_bytes;
    lim.l0b_bytes = p.chip.l0b_bytes;
    lim.l0c_bytes = p.chip.l0c_bytes;
    lim.ub_bytes = p.chip.ub_bytes;
    lim.gm_bytes = p.chip.gm_bytes;
    return lim;
}

RunConfig parse_run_config(int argc, const char* const* argv) {
    CLI::App app;
    ParseTargets t;
    build_app(app, t);
    app.parse(argc, argv);
    if (t.run_mode == "npu") {
        throw tandem::SimError("-r npu: no Ascend NPU is present on this machine; Tandem simulates one: use -r sim");
    }
    t.cfg.comm_mode = t.comm_mode == "ring" ? CommMode::Ring : CommMode::Mesh;
    for (const auto& [name, value] : t.knobs)
        if (value) t.cfg.knobs[name] = *value;
    try {
        if (!t.trace_ranks.empty()) t.cfg.trace_ranks = tandem::parse_rank_list(t.trace_ranks);
    } catch (const tandem::SimError& e) {
        fail(std::string("--trace-ranks: ") + e.what());
    }
    try {
        if (!t.trace_window.empty()) t.cfg.trace_window_us = tandem::parse_window_us(t.trace_window);
    } catch (const tandem::SimError& e) {
        fail(std::string("--trace-window-us: ") + e.what());
    }
    check_batch_flags(app, t.cfg);
    // A variant built for one shape (gemm pto_performance: 6144^3) runs it when none is given.
    if (const kernels::OpDesc* op = known_op(t.cfg)) {
        const kernels::VariantDesc* v = t.cfg.variant.empty() ? &op->variants.front() : op->find_variant(t.cfg.variant);
        if (v != nullptr && v->default_shape) {
            if (app.count("--gm") == 0) t.cfg.m = (*v->default_shape)[0];
            if (app.count("--gk") == 0) t.cfg.k = (*v->default_shape)[1];
            if (app.count("--gn") == 0) t.cfg.n = (*v->default_shape)[2];
        }
    }
    return t.cfg;
}

void apply_profile_defaults(RunConfig& cfg, const tandem::Profile& profile) {
    apply_op_defaults(cfg);
    const kernels::OpDesc* op = known_op(cfg);
    const kernels::VariantDesc* v = op != nullptr ? op->find_variant(cfg.variant) : nullptr;
    const KernelBufferLimits limits = buffer_limits_of(profile);
    if (!cfg.compute_blocks) {
        cfg.compute_blocks = v && v->default_compute_blocks ? v->default_compute_blocks(limits) : profile.chip.aic_cores;
    }
    if (!cfg.comm_blocks) {
        cfg.comm_blocks = v && v->default_comm_blocks ? v->default_comm_blocks(limits) : profile.chip.aiv_cores;
    }
}

void apply_op_defaults(RunConfig& cfg) {
    const kernels::OpDesc* op = known_op(cfg);
    if (op == nullptr) return;  // validate_run_config names the problem
    if (cfg.variant.empty()) cfg.variant = op->variants.front().name;
    const kernels::VariantDesc* v = op->find_variant(cfg.variant);
    if (v == nullptr) return;
    if (cfg.schedule.empty()) cfg.schedule = v->schedules.front();
    if (cfg.out_dtype.empty()) cfg.out_dtype = dtype_name(v->out_dtypes.front());
}

// --trace-ranks / --trace-window-us only make sense with --trace, and name existing ranks.
void check_trace_filter(const RunConfig& cfg) {
    if (cfg.trace_file.empty() && (!cfg.trace_ranks.empty() || cfg.trace_window_us)) {
        fail("--trace-ranks/--trace-window-us limit a trace: add --trace FILE");
    }
    for (int r : cfg.trace_ranks) {
        if (r >= cfg.ranks) {
            fail(fmt::format("--trace-ranks: rank {} does not exist (ranks are 0..{})", r, cfg.ranks - 1));
        }
    }
}

// The op, its variant and the choices the variant offers (schedule, dtypes, bias, comm mode,
// knobs): each refusal names the flag, the value and what is available.
void check_op_choices(const RunConfig& c) {
    const kernels::OpDesc& op = op_of(c);
    const kernels::VariantDesc* v = op.find_variant(c.variant);
    if (v == nullptr) {
        std::vector<std::string> names;
        for (const kernels::VariantDesc& x : op.variants) names.push_back(x.name);
        fail(fmt::format("--variant {}: op {} has no such variant (variants: {})", c.variant, op.name, fmt::join(names, ", ")));
    }
    auto offered = [](const std::vector<std::string>& list, const std::string& value) {
        return std::find(list.begin(), list.end(), value) != list.end();
    };
    const std::string where = fmt::format("{} {}", op.name, v->name);
    if (!offered(v->schedules, c.schedule)) {
        fail(fmt::format("--schedule {}: {} offers {}", c.schedule, where, fmt::join(v->schedules, ", ")));
    }
    const DType in = parse_dtype("--dtype", c.dtype);
    if (std::find(v->dtypes.begin(), v->dtypes.end(), in) == v->dtypes.end()) {
        std::vector<std::string> names;
        for (DType t : v->dtypes) names.push_back(dtype_name(t));
        fail(fmt::format("--dtype {}: {} takes {}", c.dtype, where, fmt::join(names, ", ")));
    }
    const DType out = parse_dtype("--out-dtype", c.out_dtype);
    if (std::find(v->out_dtypes.begin(), v->out_dtypes.end(), out) == v->out_dtypes.end()) {
        std::vector<std::string> names;
        for (DType t : v->out_dtypes) names.push_back(dtype_name(t));
        fail(fmt::format("--out-dtype {}: {} writes {}", c.out_dtype, where, fmt::join(names, ", ")));
    }
    if (c.bias != "none" && !v->takes_bias) fail(fmt::format("--bias {}: {} takes no bias", c.bias, where));
    const std::string mode = comm_mode_name(c.comm_mode);
    if (!offered(v->comm_modes, mode)) {
        fail(fmt::format("--comm-mode {}: {} offers {}", mode, where, fmt::join(v->comm_modes, ", ")));
    }
    for (const auto& [name, value] : c.knobs) {
        const bool declared = std::any_of(v->knobs.begin(), v->knobs.end(), [&](const kernels::KnobDesc& k) { return k.name == name; });
        if (!declared) {
            std::string flag = "--" + name;
            std::replace(flag.begin(), flag.end(), '_', '-');
            std::vector<std::string> users;
            for (const kernels::OpDesc* o : kernels::registered_ops())
                for (const kernels::VariantDesc& x : o->variants)
                    for (const kernels::KnobDesc& k : x.knobs)
                        if (k.name == name) users.push_back(o->name + " " + x.name);
            fail(fmt::format("{} {}: {} has no such knob ({} applies to {})", flag, value, where, flag, fmt::join(users, ", ")));
        }
    }
    if (!c.fault.empty() && !offered(v->faults, c.fault)) {
        fail(fmt::format("fault '{}': {} has no such deliberate bug (faults: {})", c.fault, where, fmt::join(v->faults, ", ")));
    }
    if (c.op != "allgather_gemm" && (c.write_inputs || !c.input_dir.empty())) {
        fail(fmt::format("{}: the seed's input files are AllGather+GEMM's; op {} generates its inputs",
                         c.write_inputs ? "--write-inputs" : "--input-dir", op.name));
    }
}

void validate_run_config(const RunConfig& given, const KernelBufferLimits& limits, std::int64_t host_memory_limit_bytes) {
    RunConfig cfg = given;
    apply_op_defaults(cfg);
    check_ranks(cfg);
    check_modes(cfg);
    check_op_choices(cfg);
    check_blocks("--compute-blocks", cfg.compute_blocks, "AIC", limits.aic_cores);
    if (op_of(cfg).communicates()) {
        check_blocks("--comm-blocks", cfg.comm_blocks, "AIV", limits.aiv_cores);
    } else if (cfg.comm_blocks.value_or(0) != 0) {
        fail(fmt::format("--comm-blocks {}: op {} has no communication kernel; leave --comm-blocks out (nearest valid: 0)",
                         *cfg.comm_blocks, cfg.op));
    }
    variant_of(cfg).validate(op_params_of(cfg), limits);
    check_memory(cfg, limits, host_memory_limit_bytes);
    if (!cfg.timing_only && std::filesystem::exists(cfg.out_dir) && !std::filesystem::is_directory(cfg.out_dir)) {
        fail(fmt::format("--out-dir {}: exists and is not a directory; choose another path", cfg.out_dir));
    }
    check_output_dir("--json", cfg.json_file);
    check_output_dir("--trace", cfg.trace_file);
    check_trace_filter(cfg);
}

const kernels::OpDesc& op_of(const RunConfig& cfg) {
    if (const kernels::OpDesc* op = known_op(cfg)) return *op;
    return kernels::find_op(cfg.op);  // throws, listing the registered ops
}

const kernels::VariantDesc& variant_of(const RunConfig& cfg) {
    const kernels::OpDesc& op = op_of(cfg);
    if (cfg.variant.empty()) return op.variants.front();
    const kernels::VariantDesc* v = op.find_variant(cfg.variant);
    if (v == nullptr) fail(fmt::format("--variant {}: op {} has no such variant", cfg.variant, op.name));
    return *v;
}

DType parse_dtype(const std::string& flag, const std::string& name) {
    if (name == "fp16") return DType::F16;
    if (name == "fp32") return DType::F32;
    if (name == "bf16") return DType::BF16;
    if (name == "int8") {
        fail(fmt::format("{} int8: the hardware facts Tandem's profiles are built from give no int8 cube rate, so "
                         "int8 is not modelled; use fp16",
                         flag));
    }
    fail(fmt::format("{} {}: unknown dtype (fp16, bf16, fp32)", flag, name));
}

kernels::OpParams op_params_of(const RunConfig& given) {
    RunConfig c = given;
    apply_op_defaults(c);
    kernels::OpParams p;
    p.ranks = c.ranks;
    p.m = c.m;
    p.k = c.k;
    p.n = c.n;
    p.base_m = c.base_m;
    p.base_n = c.base_n;
    p.compute_blocks = c.compute_blocks.value_or(0);
    p.comm_blocks = c.comm_blocks.value_or(0);
    p.variant = c.variant;
    p.schedule = c.schedule;
    p.dtype = parse_dtype("--dtype", c.dtype);
    p.out_dtype = parse_dtype("--out-dtype", c.out_dtype);
    p.bias = c.bias == "m" ? kernels::BiasKind::M : (c.bias == "n" ? kernels::BiasKind::N : kernels::BiasKind::None);
    p.comm_mode = comm_mode_name(c.comm_mode);
    p.knobs = c.knobs;
    p.fault = c.fault;
    return p;
}

double chip_gm_bytes(const RunConfig& c) {
    const kernels::OpDesc& op = op_of(c);
    const kernels::VariantDesc& v = variant_of(c);
    const kernels::OpParams p = op_params_of(c);
    const ShardShapes sh = shard_shapes(op.sharding_of(v), p);
    const kernels::Padding pad = v.padding ? v.padding(p) : kernels::Padding{};
    auto up = [](double x, int step) { return std::ceil(x / step) * step; };
    const double in = dtype_bytes(p.dtype);
    const double tensors = in * up(sh.a_rows, pad.m) * up(sh.a_cols, pad.k) + in * up(sh.b_rows, pad.n) * up(sh.b_cols, pad.k) +
                           dtype_bytes(p.out_dtype) * up(sh.out_rows, pad.m) * up(sh.out_cols, pad.n) + in * sh.bias_len;
    return tensors + v.workspace_bytes(p);
}

double functional_host_bytes(const RunConfig& c) {
    // Every chip's memory, the host's copies of the inputs (about one chip's A and B per rank)
    // and the golden C (fp32).
    const kernels::OpParams p = op_params_of(c);
    const ShardShapes sh = shard_shapes(op_of(c).sharding_of(variant_of(c)), p);
    const double in = dtype_bytes(p.dtype);
    const double inputs = p.ranks * (in * sh.a_rows * double(sh.a_cols) + in * sh.b_rows * double(sh.b_cols));
    const double golden = double(p.m) * p.n * kFp32Bytes;
    return p.ranks * chip_gm_bytes(c) + inputs + golden;
}

std::string list_ops_text() {
    std::string out;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        out += fmt::format("{}: {}\n", op->name, op->doc);
        for (const kernels::VariantDesc& v : op->variants) {
            std::vector<std::string> in, outs;
            for (DType t : v.dtypes) in.push_back(dtype_name(t));
            for (DType t : v.out_dtypes) outs.push_back(dtype_name(t));
            out += fmt::format("  --variant {}{}: {}\n", v.name, &v == &op->variants.front() ? " (default)" : "", v.doc);
            out += fmt::format("      schedules {}; dtype {}; out-dtype {}; bias {}; comm-mode {}\n", fmt::join(v.schedules, ", "),
                               fmt::join(in, ", "), fmt::join(outs, ", "), v.takes_bias ? "none, m, n" : "none",
                               fmt::join(v.comm_modes, ", "));
            for (const kernels::KnobDesc& k : v.knobs) {
                std::string flag = "--" + k.name;
                std::replace(flag.begin(), flag.end(), '_', '-');
                for (const std::string& a : k.aliases) flag += " (" + a + ")";
                out += fmt::format("      {}: {}\n", flag, k.doc);
            }
            out += fmt::format("      constraints: {}\n", v.constraints);
        }
    }
    return out;
}

std::string usage_text() {
    CLI::App app;
    ParseTargets t;
    build_app(app, t);
    return app.help();
}

int run_config_exit_code(const CLI::Error& e) {
    if (dynamic_cast<const CLI::CallForHelp*>(&e) || dynamic_cast<const CLI::CallForAllHelp*>(&e)) return 0;
    const int code = e.get_exit_code();
    return code != 0 ? code : 2;
}

int report_cli_error(const CLI::Error& e, std::ostream& out, std::ostream& err) {
    const int code = run_config_exit_code(e);
    if (code == 0) {
        out << usage_text();
    } else {
        err << "[ERROR] " << e.what() << " (run with --help for usage)\n";
    }
    return code;
}

}  // namespace tandem::host
