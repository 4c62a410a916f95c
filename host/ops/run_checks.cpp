// The host's checks of a run's common parameters. See run_checks.hpp.
#include "host/ops/run_checks.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "host/ops/shard_shapes.hpp"
#include "host/params/param_schema.hpp"
#include "kernels/param_error.hpp"
#include "kernels/registry.hpp"

namespace tandem::host {
namespace {

using kernels::ParamError;
using kernels::ParamValue;

constexpr std::int64_t kFp32Bytes = 4;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool offered(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<std::string> dtype_names(const std::vector<DType>& types) {
    std::vector<std::string> names;
    for (DType t : types) names.push_back(dtype_name(t));
    return names;
}

// Bytes of GM each chip holds for a run: the op's workspace and the host's tensors, padded as
// the variant asks. Doubles: the products can exceed int64 for absurd shapes.
double chip_gm_bytes(const ResolvedRun& run, const kernels::OpParams& p) {
    const ShardShapes sh = shard_shapes(run.sharding(), p);
    const kernels::Padding pad = run.variant->padding ? run.variant->padding(p) : kernels::Padding{};
    auto up = [](double x, int step) { return std::ceil(x / step) * step; };
    const double in = dtype_bytes(p.dtype);
    const double tensors = in * up(sh.a_rows, pad.m) * up(sh.a_cols, pad.k) + in * up(sh.b_rows, pad.n) * up(sh.b_cols, pad.k) +
                           dtype_bytes(p.out_dtype) * up(sh.out_rows, pad.m) * up(sh.out_cols, pad.n) + in * sh.bias_len;
    return tensors + run.variant->workspace_bytes(p);
}

// The host memory a functional run holds: every chip's memory, the host's copies of the inputs
// (about one chip's A and B per rank) and the golden C (fp32).
double functional_host_bytes(const ResolvedRun& run, const kernels::OpParams& p) {
    const ShardShapes sh = shard_shapes(run.sharding(), p);
    const double in = dtype_bytes(p.dtype);
    const double inputs = p.ranks * (in * sh.a_rows * double(sh.a_cols) + in * sh.b_rows * double(sh.b_cols));
    const double golden = double(p.m) * p.n * kFp32Bytes;
    return p.ranks * chip_gm_bytes(run, p) + inputs + golden;
}

using BytesOf = std::function<double(const ResolvedRun&, const kernels::OpParams&)>;

// The largest M that is a multiple of `step`, at most the run's, with bytes(M) <= limit (bytes
// grows with M); nullopt when even `step` is too large.
std::optional<std::int64_t> largest_m_within(const ResolvedRun& run, const BytesOf& bytes, double limit,
                                             std::int64_t step) {
    kernels::OpParams probe = run.params;
    auto fits = [&](std::int64_t m) {
        probe.m = static_cast<int>(m);
        return bytes(run, probe) <= limit;
    };
    if (!fits(step)) return std::nullopt;
    std::int64_t lo = 1;  // multiples of step: lo fits, hi does not
    std::int64_t hi = std::min<std::int64_t>(run.params.m, INT_MAX) / step + 1;
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (fits(mid * step) ? lo : hi) = mid;
    }
    return lo * step;
}

std::vector<ParamValue> shape_of(const RunRequest& r) {
    return {{kernels::kParamRanks, r.ranks}, {kernels::kParamM, r.m}, {kernels::kParamK, r.k}, {kernels::kParamN, r.n}};
}

// A size in the largest unit that keeps it readable ("0.0 GiB" of a tiny test profile says nothing).
std::string size_text(double bytes) {
    if (bytes >= 0.1 * kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
    if (bytes >= 0.1 * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
    if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
    return fmt::format("{:.0f} bytes", bytes);
}

}  // namespace

void check_ranks(const RunRequest& r, const kernels::OpDesc& op, const Profile& profile) {
    const ParamValue ranks(kernels::kParamRanks, r.ranks);
    const int least = std::max(kMinRanks, op.min_ranks);
    if (r.ranks < least) {
        throw ParamError({ranks}, fmt::format("op {} needs at least {} ranks{}", op.name, least,
                                              least == 2 ? " (one rank is not a collective)" : ""),
                         {{kernels::kParamRanks, least}});
    }
    if (r.timing_only && r.ranks > kMaxTimingOnlyRanks) {
        throw ParamError({ranks}, fmt::format("timing-only runs support at most {} ranks", kMaxTimingOnlyRanks),
                         {{kernels::kParamRanks, kMaxTimingOnlyRanks}});
    }
    if (!r.timing_only && r.ranks > kMaxFunctionalRanks) {
        throw ParamError({ranks},
                         fmt::format("functional runs support at most {} ranks (every rank's data is held in host "
                                     "memory; add {} for up to {} ranks)",
                                     kMaxFunctionalRanks, kernels::mention(kernels::kParamTimingOnly),
                                     kMaxTimingOnlyRanks),
                         {{kernels::kParamRanks, kMaxFunctionalRanks}});
    }
    const InterconnectProfile& net = profile.interconnect;
    if (r.ranks > cluster_max_ranks(net)) {
        throw ParamError({ranks},
                         fmt::format("{} describes a cluster of at most {} ranks ({} nodes of {}); a larger one "
                                     "needs a profile that derives from it with more interconnect.max_nodes",
                                     profile.name, cluster_max_ranks(net), net.max_nodes, net.ranks_per_node),
                         {{kernels::kParamRanks, cluster_max_ranks(net)}});
    }
    // The forwarding ring needs a neighbour to forward to: at least 2 ranks, which the op's
    // least ranks already guarantee for every op that communicates.
}

void check_sizes(const RunRequest& r) {
    for (const auto& [ref, value] : {std::pair{kernels::kParamM, r.m}, {kernels::kParamK, r.k}, {kernels::kParamN, r.n}}) {
        if (value < 1) throw ParamError({{ref, value}}, fmt::format("{} must be positive (at least 1)", ref.word));
    }
}

void check_op_choices(const RunRequest& r, const kernels::OpDesc& op, const kernels::VariantDesc& v) {
    const std::string where = fmt::format("{} {}", op.name, v.name);
    if (!offered(v.schedules, r.schedule)) {
        throw ParamError({{kernels::kParamSchedule, r.schedule}},
                         fmt::format("{} offers {}", where, fmt::join(v.schedules, ", ")));
    }
    if (std::find(v.dtypes.begin(), v.dtypes.end(), r.dtype) == v.dtypes.end()) {
        throw ParamError({{kernels::kParamDtype, dtype_name(r.dtype)}},
                         fmt::format("{} takes {}", where, fmt::join(dtype_names(v.dtypes), ", ")));
    }
    const DType out = r.out_dtype.value_or(v.out_dtypes.front());
    if (std::find(v.out_dtypes.begin(), v.out_dtypes.end(), out) == v.out_dtypes.end()) {
        throw ParamError({{kernels::kParamOutDtype, dtype_name(out)}},
                         fmt::format("{} writes {}", where, fmt::join(dtype_names(v.out_dtypes), ", ")));
    }
    if (r.bias != kernels::BiasKind::None && !v.takes_bias) {
        throw ParamError({{kernels::kParamBias, kernels::bias_name(r.bias)}}, fmt::format("{} takes no bias", where));
    }
    if (!offered(v.comm_modes, r.comm_mode)) {
        throw ParamError({{kernels::kParamCommMode, r.comm_mode}},
                         fmt::format("{} offers {}", where, fmt::join(v.comm_modes, ", ")));
    }
    for (const auto& [name, value] : r.knobs) {
        const bool declared =
            std::any_of(v.knobs.begin(), v.knobs.end(), [&](const kernels::KnobDesc& k) { return k.name == name; });
        if (declared) continue;
        std::vector<std::string> users;
        for (const kernels::OpDesc* o : kernels::registered_ops())
            for (const kernels::VariantDesc& x : o->variants)
                for (const kernels::KnobDesc& k : x.knobs)
                    if (k.name == name) users.push_back(o->name + " " + x.name);
        throw ParamError({ParamValue::knob(name, value)},
                         fmt::format("{} has no such knob ({} applies to {})", where, kernels::mention_knob(name),
                                     users.empty() ? std::string("no variant") : fmt::format("{}", fmt::join(users, ", "))));
    }
    if (!r.fault.empty() && !offered(v.faults, r.fault)) {
        throw ParamError({{kernels::kParamFault, r.fault}},
                         fmt::format("{} has no such deliberate bug (faults: {})", where, fmt::join(v.faults, ", ")));
    }
}

void check_blocks(const RunRequest& r, const kernels::OpDesc& op, const kernels::BufferLimits& limits) {
    auto in_range = [](const kernels::ParamRef& ref, Param p, int blocks, const char* core_kind, int cores) {
        const IntRange range = *param_desc(p).range;
        if (blocks >= range.lo && blocks <= range.hi) return;
        throw ParamError({{ref, blocks}},
                         fmt::format("must be in {}..{} (blocks beyond the {} {} cores run in waves)", range.lo,
                                     range.hi, cores, core_kind),
                         {{ref, std::clamp(blocks, range.lo, range.hi)}});
    };
    in_range(kernels::kParamComputeBlocks, Param::ComputeBlocks, r.compute_blocks.value_or(0), "AIC", limits.aic_cores);
    if (op.communicates()) {
        in_range(kernels::kParamCommBlocks, Param::CommBlocks, r.comm_blocks.value_or(0), "AIV", limits.aiv_cores);
    } else if (r.comm_blocks.value_or(0) != 0) {
        throw ParamError({{kernels::kParamCommBlocks, *r.comm_blocks}},
                         fmt::format("op {} has no communication kernel; leave the comm blocks unset", op.name),
                         {{kernels::kParamCommBlocks, 0}});
    }
}

void check_warmup_runs(const RunRequest& r) {
    constexpr kernels::ParamRef kParamWarmupRuns{"warmup_runs", "warm-up runs"};  // no op reads it
    const IntRange range = *param_desc(Param::WarmupRuns).range;
    if (r.warmup_runs >= range.lo && r.warmup_runs <= range.hi) return;
    throw ParamError({{kParamWarmupRuns, r.warmup_runs}},
                     fmt::format("must be in {}..{} (each warm-up simulates every view once more)", range.lo, range.hi),
                     {{kParamWarmupRuns, std::clamp(r.warmup_runs, range.lo, range.hi)}});
}

void check_memory(const ResolvedRun& run, const kernels::BufferLimits& lim, std::int64_t host_limit) {
    const RunRequest& r = run.request;
    const std::int64_t step = std::int64_t{r.ranks} * r.base_m;  // a multiple of every op's M granule
    const double chip_bytes = chip_gm_bytes(run, run.params);
    if (chip_bytes > static_cast<double>(lim.gm_bytes)) {
        const auto m_ok = largest_m_within(run, chip_gm_bytes, static_cast<double>(lim.gm_bytes), step);
        const std::string detail = fmt::format("each chip's HBM would hold the op's inputs, output and workspace = "
                                               "{}, more than the {} of profile {}",
                                               size_text(chip_bytes), size_text(static_cast<double>(lim.gm_bytes)),
                                               lim.profile_name);
        if (m_ok) throw ParamError(shape_of(r), detail, {{kernels::kParamM, *m_ok}});
        throw ParamError(shape_of(r), detail + "; nearest valid: a smaller K or N");
    }
    if (r.timing_only) return;
    const double host_bytes = functional_host_bytes(run, run.params);
    if (host_bytes > static_cast<double>(host_limit)) {
        const auto m_ok = largest_m_within(run, functional_host_bytes, static_cast<double>(host_limit), step);
        const std::string detail = fmt::format(
            "a functional run would hold {} of host memory (every chip's inputs, output and workspace, plus "
            "the inputs and the golden), above the {} limit; add {} (timing model only, no data)",
            size_text(host_bytes), size_text(static_cast<double>(host_limit)), kernels::mention(kernels::kParamTimingOnly));
        if (m_ok) throw ParamError(shape_of(r), detail, {{kernels::kParamM, *m_ok}});
        throw ParamError(shape_of(r), detail);
    }
}

}  // namespace tandem::host
