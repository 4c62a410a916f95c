#pragma once
// The command line of the AllGather+GEMM host program (the seed's run.sh flags plus Tandem's own,
// README.md "Run an op", `run.sh --help`) and the checks a RunConfig must pass before anything
// is simulated.
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

#include "host/cli/command_line.hpp"
#include "kernels/op_desc.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// Limits that are policy, not hardware (hardware numbers come from the profile).
inline constexpr int kMinRanks = 1;                 // a cluster of one chip; an op asks for more (OpDesc::min_ranks)
inline constexpr int kMaxFunctionalRanks = 32;      // functional runs keep every rank's data in host memory
inline constexpr int kMaxTimingOnlyRanks = 384;     // the largest cluster the timing model is meant for
inline constexpr int kMaxBlocks = 4096;             // blocks beyond the core count run in waves, as on the device
inline constexpr int kMaxJobs = 1024;               // --jobs: configurations of a sweep run at once
inline constexpr std::int64_t kFunctionalHostMemoryLimitBytes = std::int64_t{16} << 30;

// What the kernels' tiles must fit in, taken from the profile so that no hardware number is
// written here (each op says what its tiles need: kernels/op_desc.hpp).
using KernelBufferLimits = kernels::BufferLimits;

KernelBufferLimits buffer_limits_of(const tandem::Profile& profile);

// Parses the command line. Throws CLI::Error (a CLI::ParseError) for --help, unknown flags and
// malformed values: hand it to report_cli_error(). Throws tandem::SimError for `-r npu` and for
// flags that do not go together with --sweep/--tune (--json, --trace, ...; shape flags with
// --sweep). Does not print anything and does not check shapes (see validate_run_config).
RunConfig parse_run_config(int argc, const char* const* argv);

// Fills what was left unset: compute blocks = AIC cores, comm blocks = AIV cores (the published
// kernels' defaults, 24/48 on 910B1/B2 and 20/40 on 910B3/B4); for a known op, its default
// variant, the variant's default schedule and output dtype.
void apply_profile_defaults(RunConfig& cfg, const tandem::Profile& profile);

// The op's part of apply_profile_defaults: default variant, schedule and output dtype of a known
// op (nothing for an unknown one: validate_run_config names the problem).
void apply_op_defaults(RunConfig& cfg);

// The op and variant a config names (RunConfig::op_desc, else the registry's op of that name; an
// empty variant is the op's default); throw SimError if
// unknown.
const kernels::OpDesc& op_of(const RunConfig& cfg);
const kernels::VariantDesc& variant_of(const RunConfig& cfg);

// What the op's kernels receive (cfg validated and defaults applied).
kernels::OpParams op_params_of(const RunConfig& cfg);

// "fp16", "bf16", "fp32" <-> DType; throws SimError naming `flag` for an unknown name.
DType parse_dtype(const std::string& flag, const std::string& name);

// Checks every constraint on a parsed config (the common shape and tile rules that
// `run.sh --help` lists, then the variant's own: docs/ops/<op>.md); throws
// tandem::SimError with a one-line message on the first one that fails.
// `host_memory_limit_bytes` bounds the host memory of a functional run.
void validate_run_config(const RunConfig& cfg, const KernelBufferLimits& limits,
                         std::int64_t host_memory_limit_bytes = kFunctionalHostMemoryLimitBytes);

// Bytes of GM each chip holds for a run (the op's workspace and the host's tensors), and the host
// memory a functional run holds (every chip's data, the inputs and the golden). Doubles: the
// products can exceed int64 for absurd shapes. `cfg` must name a known op and variant.
double chip_gm_bytes(const RunConfig& cfg);
double functional_host_bytes(const RunConfig& cfg);

// The --list-ops text: ops, variants, their knobs and constraints.
std::string list_ops_text();

// The full --help text.
std::string usage_text();

// Exit code for a CLI11 exception: 0 for --help, non-zero for errors.
int run_config_exit_code(const CLI::Error& e);

// Prints what a CLI11 exception means (usage to `out` for --help; one "[ERROR] ..." line to
// `err` otherwise) and returns the exit code to use.
int report_cli_error(const CLI::Error& e, std::ostream& out, std::ostream& err);

}  // namespace tandem::host
