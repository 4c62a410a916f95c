#pragma once
// The command line of the AllGather+GEMM host program (the seed's run.sh flags plus Tandem's own,
// SPEC.md "run.sh") and the checks a RunConfig must pass before anything is simulated.
//
// Two steps, because some limits are only known once the hardware profile is loaded:
//   RunConfig cfg = parse_run_config(argc, argv);      // syntax: flags, numbers, -r npu
//   Profile p = ...load the profile named by cfg...;
//   apply_profile_defaults(cfg, p);                    // block counts default to the core counts
//   validate_run_config(cfg, buffer_limits_of(p));     // shapes, tiles vs buffers, memory
// Every failure is one line naming the flag, the value, the constraint and a nearby valid value.
#include <cstdint>
#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

#include "host/run_config.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// Limits that are policy, not hardware (hardware numbers come from the profile).
inline constexpr int kMinRanks = 2;                 // one rank is not a collective
inline constexpr int kMaxFunctionalRanks = 32;      // functional runs keep every rank's data in host memory
inline constexpr int kMaxTimingOnlyRanks = 384;     // the largest cluster the timing model is meant for
inline constexpr int kMaxBlocks = 4096;             // blocks beyond the core count run in waves, as on the device
inline constexpr int kMaxJobs = 1024;               // --jobs: configurations of a sweep run at once
inline constexpr std::int64_t kFunctionalHostMemoryLimitBytes = std::int64_t{16} << 30;

// What the kernels' tiles must fit in, taken from the profile so that no hardware number is
// written here. See SEED_KERNEL.md "Buffer use" for what each buffer holds.
struct KernelBufferLimits {
    std::string profile_name;   // for messages
    int aic_cores = 0;          // for messages (blocks beyond this run in waves)
    int aiv_cores = 0;
    int cube_fractal = 0;       // base-m and base-n must be multiples of it
    std::int64_t l1_bytes = 0;  // 2 A panels (base-m x base-n fp16) + 2 B panels (base-n x base-n fp16)
    std::int64_t l0a_bytes = 0; // 2 tiles of base-m x base-n/4 fp16
    std::int64_t l0b_bytes = 0; // 2 tiles of base-n/4 x base-n fp16
    std::int64_t l0c_bytes = 0; // 1 accumulator of base-m x base-n fp32
    std::int64_t ub_bytes = 0;  // 2 tiles of base-m x base-n fp16 (ping and pong, as published)
    std::int64_t gm_bytes = 0;  // per chip: the window (whole A), B and C
};

KernelBufferLimits buffer_limits_of(const tandem::Profile& profile);

// Parses the command line. Throws CLI::Error (a CLI::ParseError) for --help, unknown flags and
// malformed values: hand it to report_cli_error(). Throws tandem::SimError for `-r npu` and for
// flags that do not go together with --sweep/--tune (--json, --trace, ...; shape flags with
// --sweep). Does not print anything and does not check shapes (see validate_run_config).
RunConfig parse_run_config(int argc, const char* const* argv);

// Fills the block counts left unset: compute blocks = AIC cores, comm blocks = AIV cores (the
// published kernel's defaults, 24/48 on 910B1/B2 and 20/40 on 910B3/B4).
void apply_profile_defaults(RunConfig& cfg, const tandem::Profile& profile);

// Checks every constraint of SPEC.md and SEED_KERNEL.md on a parsed config; throws
// tandem::SimError with a one-line message on the first one that fails.
// `host_memory_limit_bytes` bounds the host memory of a functional run.
void validate_run_config(const RunConfig& cfg, const KernelBufferLimits& limits,
                         std::int64_t host_memory_limit_bytes = kFunctionalHostMemoryLimitBytes);

// Host memory a functional run holds, in bytes: per rank its window (whole A, fp16), B (fp16) and
// C (fp32), plus the golden C (fp32). A double: the product can exceed int64 for absurd shapes.
double functional_host_bytes(const RunConfig& cfg);

// The full --help text.
std::string usage_text();

// Exit code for a CLI11 exception: 0 for --help, non-zero for errors.
int run_config_exit_code(const CLI::Error& e);

// Prints what a CLI11 exception means (usage to `out` for --help; one "[ERROR] ..." line to
// `err` otherwise) and returns the exit code to use.
int report_cli_error(const CLI::Error& e, std::ostream& out, std::ostream& err);

}  // namespace tandem::host
