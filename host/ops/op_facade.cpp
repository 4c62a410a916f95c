// The ops facade. See op_facade.hpp.
#include "host/ops/op_facade.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "host/ops/run_checks.hpp"
#include "host/params/param_schema.hpp"
#include "kernels/param_error.hpp"
#include "kernels/registry.hpp"

namespace tandem::host {
namespace {

template <class M>
struct MemberOf;
template <class C, class T>
struct MemberOf<T C::*> {
    using type = T;
};

// A run's request, as the op's kernels receive it (every value set by with_defaults): every Run
// parameter the op sees, from its RunRequest member into its OpParams member (the schema row
// names both); an unset value becomes OpParams' own default.
kernels::OpParams op_params_of(const RunRequest& r, TopologyKind topology) {
    kernels::OpParams p;
    const kernels::OpParams defaults;
    for (const ParamDesc& d : param_schema()) {
        std::visit(
            [&](auto from, auto to) {
                if constexpr (!std::is_same_v<decltype(from), std::monostate> && !std::is_same_v<decltype(to), std::monostate>) {
                    using From = typename MemberOf<decltype(from)>::type;
                    using To = typename MemberOf<decltype(to)>::type;
                    if constexpr (std::is_same_v<From, To>) p.*to = r.*from;
                    else if constexpr (std::is_same_v<From, std::optional<To>>) p.*to = (r.*from).value_or(defaults.*to);
                    else throw std::logic_error("parameter '" + d.name + "': its RunRequest and OpParams members differ in type");
                }
            },
            d.run_member, d.op_member);
    }
    p.knobs = r.knobs;
    p.topology = topology;
    return p;
}

}  // namespace

std::map<std::string, int> ResolvedRun::effective_knobs() const {
    if (!variant->effective_knobs) return {};
    return variant->effective_knobs(params);
}

kernels::BufferLimits buffer_limits_of(const Profile& p) {
    kernels::BufferLimits lim;
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

const kernels::OpDesc& op_of(const RunRequest& r) {
    if (r.op_desc != nullptr) return *r.op_desc;
    std::vector<std::string> names;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        if (op->name == r.op) return *op;
        names.push_back(op->name);
    }
    throw kernels::ParamError({{kernels::kParamOp, r.op}}, fmt::format("no such op (ops: {})", fmt::join(names, ", ")));
}

const kernels::VariantDesc& variant_of(const RunRequest& r) {
    const kernels::OpDesc& op = op_of(r);
    if (r.variant.empty()) return op.variants.front();
    if (const kernels::VariantDesc* v = op.find_variant(r.variant)) return *v;
    std::vector<std::string> names;
    for (const kernels::VariantDesc& x : op.variants) names.push_back(x.name);
    throw kernels::ParamError({{kernels::kParamVariant, r.variant}},
                              fmt::format("op {} has no such variant (variants: {})", op.name, fmt::join(names, ", ")));
}

RunRequest with_defaults(const RunRequest& given, const Profile& profile) {
    RunRequest r = given;
    const kernels::VariantDesc& v = variant_of(r);
    r.op = op_of(r).name;
    r.variant = v.name;
    if (r.schedule.empty()) r.schedule = v.schedules.front();
    if (!r.out_dtype) r.out_dtype = v.out_dtypes.front();
    if (r.comm_mode.empty()) r.comm_mode = v.comm_modes.front();
    const kernels::BufferLimits limits = buffer_limits_of(profile);
    if (!r.compute_blocks) {
        r.compute_blocks = v.default_compute_blocks ? v.default_compute_blocks(limits) : profile.chip.aic_cores;
    }
    if (!r.comm_blocks) r.comm_blocks = v.default_comm_blocks ? v.default_comm_blocks(limits) : profile.chip.aiv_cores;
    r.soc = profile.name;
    return r;
}

ResolvedRun resolve_run(const RunRequest& given, const Profile& profile, std::int64_t host_memory_limit_bytes) {
    ResolvedRun run;
    run.request = with_defaults(given, profile);
    run.op = &op_of(run.request);
    run.variant = &variant_of(run.request);
    const kernels::BufferLimits limits = buffer_limits_of(profile);
    check_ranks(run.request, *run.op, profile);
    check_op_choices(run.request, *run.op, *run.variant);
    check_blocks(run.request, *run.op, limits);
    check_warmup_runs(run.request);
    run.params = op_params_of(run.request, profile.interconnect.topology);
    run.variant->validate(run.params, limits);
    check_sizes(run.request);  // after the variant's own rules, which suggest a valid size
    check_memory(run, limits, host_memory_limit_bytes);
    return run;
}

}  // namespace tandem::host
