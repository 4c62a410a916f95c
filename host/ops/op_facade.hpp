#pragma once
// The ops facade: the one way from what a caller asks (a RunRequest, from the command line, a
// sweep row, a --tune configuration, an API call or a bench) to an op ready to run (a
// ResolvedRun). It finds the op and its variant, fills what was left unset (from the variant,
// the op and the profile) and checks everything a run must satisfy: the host's common rules
// (ranks, blocks, the choices the variant offers, memory), then the variant's own
// (VariantDesc::validate). A refusal is a kernels::ParamError naming the parameter; each caller
// says it in its own words (host/params/param_words.hpp).
//
//   const ResolvedRun run = resolve_run(request, profile);
//   run.params      what the op's kernels receive
//   run.request     every value set (the request that runs exactly this again)
//
// Whatever an op needs differently is a field of its OpDesc; nothing here knows an op by name.
#include <cstdint>
#include <map>
#include <string>

#include "host/params/run_request.hpp"
#include "kernels/op_desc.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// A functional run keeps every rank's data in host memory: its bound (policy, not hardware).
inline constexpr std::int64_t kFunctionalHostMemoryLimitBytes = std::int64_t{16} << 30;

struct ResolvedRun {
    RunRequest request;  // every value set; soc is the profile's name
    const kernels::OpDesc* op = nullptr;
    const kernels::VariantDesc* variant = nullptr;
    kernels::OpParams params;  // `request` as the op's kernels receive it (the profile's topology set)

    const kernels::Sharding& sharding() const { return op->sharding_of(*variant); }
    // The knobs as used (a default computed by a rule included), for results.
    std::map<std::string, int> effective_knobs() const;
};

// The profile's numbers a kernel's tiles must fit in (no hardware number is written in the host).
kernels::BufferLimits buffer_limits_of(const Profile& profile);

// The op a request names: its op_desc, else the registry's op of that name. ParamError naming
// `op` and listing the ops when there is none.
const kernels::OpDesc& op_of(const RunRequest& r);

// Its variant (empty: the op's first). ParamError naming `variant` when the op has none so named.
const kernels::VariantDesc& variant_of(const RunRequest& r);

// `r` with every unset value filled, nothing checked: the variant (the op's first), its first
// schedule, output dtype and comm mode, and the block counts (the variant's rule, else one block
// per AIC / AIV core of the profile). ParamError for an unknown op or variant.
RunRequest with_defaults(const RunRequest& r, const Profile& profile);

// with_defaults, then every check. `host_memory_limit_bytes` bounds a functional run's host memory.
ResolvedRun resolve_run(const RunRequest& r, const Profile& profile,
                        std::int64_t host_memory_limit_bytes = kFunctionalHostMemoryLimitBytes);

}  // namespace tandem::host
