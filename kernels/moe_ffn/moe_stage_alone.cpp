// What moe_dispatch and moe_combine share (moe_stage_alone.hpp).
#include "kernels/moe_ffn/moe_stage_alone.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/moe_ffn/moe_knobs.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "kernels/param_error.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::moe {

void check_stage_alone(const OpParams& p, const BufferLimits& lim, std::int64_t (*ub_bytes)(const MoeShape&),
                       const char* holds, const char* barrier_after) {
    check_positive(kParamM, p.m, 1, "1");
    check_positive(kParamK, p.k, kTileN, "256");
    check_multiple(kParamK, p.k, kTileN, "256", "the published kernel's rows are whole 256-column tiles of K");
    check_moe_routing(p);
    const MoeShape s = moe_shape_of(p);
    if (ub_bytes(s) > lim.ub_bytes) {
        MoeShape fits = s;
        while (fits.k > kTileN && ub_bytes(fits) > lim.ub_bytes) fits.k -= kTileN;
        throw ParamError({{kParamK, p.k}},
                         fmt::format("{} in UB: {} bytes, above the {} bytes of {}", holds, ub_bytes(s), lim.ub_bytes,
                                     lim.profile_name),
                         {{kParamK, fits.k}});
    }
    if (p.comm_blocks < 1 || p.comm_blocks > lim.aiv_cores) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}},
                         fmt::format("the all-rank barrier after {} needs every block resident: 1 to the {} AIV cores of {}",
                                     barrier_after, lim.aiv_cores, lim.profile_name),
                         {{kParamCommBlocks, std::clamp(p.comm_blocks, 1, std::max(1, lim.aiv_cores))}});
    }
}

OpDesc stage_alone_op(std::string name, std::string title, std::string doc,
                      std::function<double(const OpParams&)> payload_bytes) {
    OpDesc d;
    d.name = std::move(name);
    d.title = std::move(title);
    d.doc = std::move(doc);
    d.sharding = Sharding{Split::Replicated, Split::Replicated, false, Split::Replicated, /*out_like_a=*/true};
    d.comm_kind = "alltoallv";
    d.comm_payload_bytes = std::move(payload_bytes);
    d.test_shape = [](int ranks) { return RunShape{ranks, 16, 256, 256}; };
    d.bench_shape = RunShape{8, 128, 7168, 256};
    d.scale_shape = RunShape{64, 128, 7168, 256};
    return d;
}

VariantDesc stage_alone_variant(std::string name, std::string doc, std::string constraints, bool inbox) {
    VariantDesc v;
    v.name = std::move(name);
    v.doc = std::move(doc);
    v.constraints = std::move(constraints);
    v.dtypes = {DType::BF16, DType::F16};  // x, as moe_ffn's
    v.default_shape = std::array<int, 3>{128, 7168, 256};
    v.knobs = moe_knob_descs();
    v.workspace_bytes = [inbox](const OpParams& p) {
        const MoeLayout l(make_route_tables(moe_shape_of(p)), /*ffn=*/false, inbox);
        return static_cast<double>(l.window + l.local);
    };
    v.effective_knobs = moe_knobs;
    return v;
}

MoeStageAloneRun::MoeStageAloneRun(const OpParams& p, const char* op, Fault fault, bool inbox)
    : op_(op), fault_(fault), tables_(std::make_shared<RouteTables>(make_route_tables(moe_shape_of(p)))),
      lay_(*tables_, /*ffn=*/false, inbox), slots_(std::make_shared<MoeSlots>(lay_.slots)), mem_(p.ranks),
      ranks_(static_cast<std::size_t>(p.ranks)) {
    const int aiv = p.comm_blocks;
    blocks_ = StageBlocks{aiv, aiv, 1, 1, 1, aiv, aiv};
}

std::vector<std::string> MoeStageAloneRun::stage_names() const { return moe_stage_names(); }

std::string MoeStageAloneRun::signal_name(int rank, std::int64_t address) const {
    const std::int64_t base = mem_.window_bases.at(static_cast<std::size_t>(rank));
    return base < 0 ? std::string{} : lay_.signal_name(rank, address - base);
}

void MoeStageAloneRun::allocate_workspace(int rank, GlobalMemory& gm) {
    const GmAllocation& l = mem_.allocate(rank, gm, lay_);
    functional_ = gm.functional();
    if (!functional_) return;
    fill_moe_inputs(*tables_, lay_, rank, l);
    fill_local(rank, l);
}

void MoeStageAloneRun::bind(int rank, const RankTensors& t) {
    std::shared_ptr<MoeRank> a = bind_moe_rank(op_, rank, t, lay_, mem_, tables_, slots_, fault_);
    adapt(*a, t);
    ranks_[static_cast<std::size_t>(rank)] = std::move(a);
}

void MoeStageAloneRun::reset_signals(HostContext& host, int rank) const {
    const std::int64_t base = mem_.window_bases[static_cast<std::size_t>(rank)];
    host.write_signals(base + lay_.counters, lay_.slots.table.words(), 0);
    lay_.barrier1.host_reset(host, base);
    lay_.barrier2.host_reset(host, base);
}

ViewPhase MoeStageAloneRun::phase(PhaseRole role, KernelLaunch k) {
    ViewPhase ph;
    ph.role = role;
    ph.launches.push_back(StreamLaunch{0, std::move(k)});
    return ph;
}

}  // namespace tandem::kernels::moe
