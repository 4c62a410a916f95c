// Command line parsing (CLI11) and validation of a RunConfig. See options.hpp.
#include "host/options.hpp"

#include "sim/trace/chrome_trace.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

constexpr std::int64_t kFp16Bytes = 2;
constexpr std::int64_t kFp32Bytes = 4;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Values CLI11 cannot hold in RunConfig directly (checked strings mapped after parsing).
struct ParseTargets {
    RunConfig cfg;
    std::string run_mode = "sim";
    std::string comm_mode = "mesh";
    std::string trace_ranks;
    std::string trace_window;
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
                   fmt::format("Number of ranks (chips): {}..{}, up to {} with --timing-only", kMinRanks,
                               kMaxFunctionalRanks, kMaxTimingOnlyRanks))
        ->transform(decimal_int())
        ->capture_default_str();
    app.add_option("--gm", c.m, "Global M (rows of A and C); a multiple of n*base-m")
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
    app.add_option("--chunk-tiles", c.chunk_tiles,
                   "Tiles per chunk (default: the published rule, 64..128 chunks per source)")
        ->transform(decimal_int());
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
    app.add_option("--sweep", c.sweep_file,
                   "Run every row of FILE, a CSV with a header row or a JSON array of objects; columns ranks, m, "
                   "k, n (required), base_m, base_n, compute_blocks, comm_blocks, comm_mode, profile (SoC or "
                   ".toml), chunk_tiles, timing_only (default: true: sweeps are timing-only unless a row says "
                   "false); other flags (-v, tile, blocks, --comm-mode) are the rows' defaults")
        ->type_name("FILE");
    app.add_flag("--tune", c.tune,
                 "Search chunk size, base tile and block split for the shape given (timing-only) and report "
                 "the best configuration by pipelined time next to the default (default: off)");
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
        "  --sweep rows.csv --sweep-out out/sweep --jobs 2\n"
        "  -n 8 --gm 16384 --gk 4096 --gn 4096 --tune");
}

// Rounds `value` to the nearest positive multiple of `step` (ties go up).
std::int64_t nearest_multiple(std::int64_t value, std::int64_t step) {
    if (value <= step) return step;
    const std::int64_t lo = value / step * step;
    const std::int64_t hi = lo + step;
    return value - lo < hi - value ? lo : hi;
}

// The first kernel buffer a base-m x base-n tile overflows, as a message; nullopt if it fits.
// Sizes are computed in double: base-m and base-n may be anything up to INT_MAX here, and their
// products would overflow int64; the comparison only needs to be right near real capacities.
std::optional<std::string> buffer_overflow(double bm, double bn, const KernelBufferLimits& lim) {
    const double bk = std::floor(bn / 4);  // the cube's K step (SEED_KERNEL.md "K loop")
    struct Need {
        const char* buffer;
        const char* holds;
        double bytes;
        std::int64_t capacity;
    };
    const Need needs[] = {
        {"L0C", "one base-m x base-n fp32 accumulator", bm * bn * kFp32Bytes, lim.l0c_bytes},
        {"L0A", "two base-m x base-n/4 fp16 tiles", 2 * bm * bk * kFp16Bytes, lim.l0a_bytes},
        {"L0B", "two base-n/4 x base-n fp16 tiles", 2 * bk * bn * kFp16Bytes, lim.l0b_bytes},
        {"L1", "two base-m x base-n A panels and two base-n x base-n B panels (fp16)",
         2 * (bm * bn + bn * bn) * kFp16Bytes, lim.l1_bytes},
        {"UB", "the comm kernel's two base-m x base-n fp16 tiles (ping and pong, as published)",
         2 * bm * bn * kFp16Bytes, lim.ub_bytes},
    };
    for (const Need& need : needs) {
        if (need.bytes > static_cast<double>(need.capacity)) {
            return fmt::format("{} holds {} = {:.0f} bytes, more than the {} {} bytes of profile {}", need.buffer,
                               need.holds, need.bytes, need.buffer, need.capacity, lim.profile_name);
        }
    }
    return std::nullopt;
}

// A nearby tile that fits every buffer: first a smaller base-m, then a smaller base-n. The search
// starts no higher than the largest side the L0C accumulator allows (the other side >= f), so it
// stays short even for absurd inputs.
std::string fitting_tile_hint(std::int64_t bm, std::int64_t bn, const KernelBufferLimits& lim) {
    const std::int64_t f = lim.cube_fractal;
    const std::int64_t longest = lim.l0c_bytes / (f * kFp32Bytes) / f * f;
    for (std::int64_t m = std::min(bm - f, longest); m >= f; m -= f) {
        if (!buffer_overflow(m, bn, lim)) return fmt::format("--base-m {}", m);
    }
    for (std::int64_t n = std::min(bn - f, longest); n >= f; n -= f) {
        if (!buffer_overflow(bm, n, lim)) return fmt::format("--base-n {}", n);
    }
    return fmt::format("--base-m {} --base-n {}", f, f);
}

[[noreturn]] void fail(const std::string& message) { throw tandem::SimError(message); }

void check_ranks(const RunConfig& c) {
    if (c.ranks < kMinRanks) {
        fail(fmt::format("-n {}: at least {} ranks are needed (one rank is not a collective); nearest valid: {}",
                         c.ranks, kMinRanks, kMinRanks));
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

void check_tile(const RunConfig& c, const KernelBufferLimits& lim) {
    const int f = lim.cube_fractal;
    if (c.base_m <= 0 || c.base_m % f != 0) {
        fail(fmt::format("--base-m {}: base-m must be a positive multiple of the cube fractal {} (the cube "
                         "multiplies {}x{} blocks); nearest valid: {}",
                         c.base_m, f, f, f, nearest_multiple(c.base_m, f)));
    }
    if (c.base_n <= 0 || c.base_n % 4 != 0) {
        fail(fmt::format("--base-n {}: base-n must be a positive multiple of 4 (the cube's K step is base-n/4); "
                         "nearest valid: {}",
                         c.base_n, nearest_multiple(c.base_n, std::lcm(4, f))));
    }
    if (c.base_n % f != 0) {
        fail(fmt::format("--base-n {}: base-n must be a multiple of the cube fractal {} (the cube multiplies "
                         "{}x{} blocks); nearest valid: {}",
                         c.base_n, f, f, f, nearest_multiple(c.base_n, std::lcm(4, f))));
    }
    if (const auto overflow = buffer_overflow(c.base_m, c.base_n, lim)) {
        fail(fmt::format("--base-m {} --base-n {}: the tile does not fit the kernels' buffers: {}; nearest valid: {}",
                         c.base_m, c.base_n, *overflow, fitting_tile_hint(c.base_m, c.base_n, lim)));
    }
}

void check_shape(const RunConfig& c) {
    const std::int64_t slice_rows = std::int64_t{c.ranks} * c.base_m;
    if (c.m <= 0) {
        fail(fmt::format("--gm {}: M must be positive; nearest valid: {} (n*base-m)", c.m, slice_rows));
    }
    if (c.k <= 0) fail(fmt::format("--gk {}: K must be positive; nearest valid: {} (base-n)", c.k, c.base_n));
    if (c.n <= 0) fail(fmt::format("--gn {}: N must be positive; nearest valid: {} (base-n)", c.n, c.base_n));
    // M % (n*base-m) == 0 implies the seed's M % base-m == 0: one check, one message.
    if (c.m % slice_rows != 0) {
        fail(fmt::format("--gm {}: M must be a multiple of n*base-m = {} (each rank's slice is whole {}-row "
                         "groups); nearest valid: {}",
                         c.m, slice_rows, c.base_m, nearest_multiple(c.m, slice_rows)));
    }
    if (c.k % c.base_n != 0) {
        fail(fmt::format("--gk {}: K must be a multiple of base-n = {} (A is sent in base-m x base-n tiles); "
                         "nearest valid: {}",
                         c.k, c.base_n, nearest_multiple(c.k, c.base_n)));
    }
    if (c.n % c.base_n != 0) {
        fail(fmt::format("--gn {}: N must be a multiple of base-n = {} (C is computed in base-m x base-n tiles); "
                         "nearest valid: {}",
                         c.n, c.base_n, nearest_multiple(c.n, c.base_n)));
    }
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

// Largest M that is a multiple of n*base-m and keeps bytes(M) = per_m*M + fixed within `limit`.
std::optional<std::int64_t> largest_m_within(double per_m, double fixed, double limit, std::int64_t step) {
    if (limit <= fixed) return std::nullopt;
    const double m = std::floor((limit - fixed) / per_m / static_cast<double>(step)) * static_cast<double>(step);
    if (m < static_cast<double>(step) || m > INT_MAX) return std::nullopt;
    return static_cast<std::int64_t>(m);
}

std::string shape_flags(const RunConfig& c) {
    return fmt::format("-n {} --gm {} --gk {} --gn {}", c.ranks, c.m, c.k, c.n);
}

void check_memory(const RunConfig& c, const KernelBufferLimits& lim, std::int64_t host_limit) {
    // Byte counts in double: M*K*ranks can exceed int64 for inputs near INT_MAX.
    const double m = c.m, k = c.k, n = c.n, ranks = c.ranks;
    const std::int64_t step = std::int64_t{c.ranks} * c.base_m;
    // Per chip: the window holds the whole A (every rank's slice lands at the same offset), B, C.
    const double chip_per_m = k * kFp16Bytes + n * kFp32Bytes;
    const double chip_fixed = k * n * kFp16Bytes;
    const double chip_bytes = chip_per_m * m + chip_fixed;
    if (chip_bytes > static_cast<double>(lim.gm_bytes)) {
        const auto m_ok = largest_m_within(chip_per_m, chip_fixed, lim.gm_bytes, step);
        fail(fmt::format("{}: each chip's HBM would hold A (M x K fp16), B and C = {:.1f} GiB, more than the "
                         "{:.1f} GiB of profile {}; nearest valid: {}",
                         shape_flags(c), chip_bytes / kGiB, lim.gm_bytes / kGiB, lim.profile_name,
                         m_ok ? fmt::format("--gm {}", *m_ok) : std::string("smaller --gk/--gn")));
    }
    if (c.timing_only) return;
    const double host_bytes = functional_host_bytes(c);
    if (host_bytes > static_cast<double>(host_limit)) {
        const double host_per_m = ranks * chip_per_m + n * kFp32Bytes;
        const double host_fixed = ranks * chip_fixed;
        const auto m_ok = largest_m_within(host_per_m, host_fixed, host_limit, step);
        fail(fmt::format("{}: a functional run would hold {:.1f} GiB of host memory (per rank: A window, B and C; "
                         "plus the golden), above the {:.1f} GiB limit; add --timing-only (timing model only, no "
                         "data){}",
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
    if (!t.trace_ranks.empty()) t.cfg.trace_ranks = tandem::parse_rank_list(t.trace_ranks);
    if (!t.trace_window.empty()) t.cfg.trace_window_us = tandem::parse_window_us(t.trace_window);
    check_batch_flags(app, t.cfg);
    return t.cfg;
}

void apply_profile_defaults(RunConfig& cfg, const tandem::Profile& profile) {
    if (!cfg.compute_blocks) cfg.compute_blocks = profile.chip.aic_cores;
    if (!cfg.comm_blocks) cfg.comm_blocks = profile.chip.aiv_cores;
}

// A chunk is 1..T tiles, T = the tiles each source sends ((M/n/base-m) x (K/base-n)).
void check_chunk_tiles(const RunConfig& cfg) {
    if (!cfg.chunk_tiles) return;
    const std::int64_t tiles = std::int64_t{cfg.m} / cfg.ranks / cfg.base_m * (cfg.k / cfg.base_n);
    if (*cfg.chunk_tiles < 1 || *cfg.chunk_tiles > tiles) {
        fail(fmt::format("--chunk-tiles {}: a chunk holds 1..{} tiles here (each source sends {} tiles of {}x{}); "
                         "nearest valid: {}",
                         *cfg.chunk_tiles, tiles, tiles, cfg.base_m, cfg.base_n,
                         std::clamp<std::int64_t>(*cfg.chunk_tiles, 1, tiles)));
    }
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

void validate_run_config(const RunConfig& cfg, const KernelBufferLimits& limits, std::int64_t host_memory_limit_bytes) {
    check_ranks(cfg);
    check_modes(cfg);
    check_tile(cfg, limits);
    check_shape(cfg);
    check_blocks("--compute-blocks", cfg.compute_blocks, "AIC", limits.aic_cores);
    check_blocks("--comm-blocks", cfg.comm_blocks, "AIV", limits.aiv_cores);
    check_chunk_tiles(cfg);
    check_memory(cfg, limits, host_memory_limit_bytes);
    if (!cfg.timing_only && std::filesystem::exists(cfg.out_dir) && !std::filesystem::is_directory(cfg.out_dir)) {
        fail(fmt::format("--out-dir {}: exists and is not a directory; choose another path", cfg.out_dir));
    }
    check_output_dir("--json", cfg.json_file);
    check_output_dir("--trace", cfg.trace_file);
    check_trace_filter(cfg);
}

double functional_host_bytes(const RunConfig& c) {
    const double m = c.m, k = c.k, n = c.n;
    const double per_rank = m * k * kFp16Bytes + k * n * kFp16Bytes + m * n * kFp32Bytes;
    return c.ranks * per_rank + m * n * kFp32Bytes;
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
