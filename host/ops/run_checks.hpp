#pragma once
// The host's checks of a run's common parameters, which the facade runs before the variant's
// own (VariantDesc::validate). Each throws kernels::ParamError naming the parameter, the value,
// the rule and a nearby valid value.
#include <cstdint>

#include "host/ops/op_facade.hpp"

namespace tandem::host {

// At least the op's least ranks (OpDesc::min_ranks), at most a functional or timing-only run's,
// and at most the profile's cluster holds (its nodes x ranks per node).
void check_ranks(const RunRequest& r, const kernels::OpDesc& op, const Profile& profile);

// M, K and N at least 1, for every op (after the variant's own checks, which name a valid size
// where they know one): a variant that pads its tensors would otherwise take a negative size as
// a padded empty one and fail inside the simulation.
void check_sizes(const RunRequest& r);

// The schedule, dtypes, bias, comm mode, knobs and fault are ones the variant offers.
void check_op_choices(const RunRequest& r, const kernels::OpDesc& op, const kernels::VariantDesc& v);

// Block counts in the schema's range; none for an op that does not communicate.
void check_blocks(const RunRequest& r, const kernels::OpDesc& op, const kernels::BufferLimits& limits);

// Warm-up runs in the schema's range.
void check_warmup_runs(const RunRequest& r);

// Each chip's HBM holds the op's workspace and the host's tensors; a functional run's host
// memory stays under `host_memory_limit_bytes`. The message suggests the largest M that fits.
void check_memory(const ResolvedRun& run, const kernels::BufferLimits& limits, std::int64_t host_memory_limit_bytes);

}  // namespace tandem::host
