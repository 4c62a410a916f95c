// moe_ffn described for the shared host (README.md in this folder; docs/ops/moe_ffn.md).
// Every rank holds its M tokens x [M, K] (bf16), their routes (topK global experts each, with
// gate weights) and E local experts (int8 W1 [K, N], W2 [N/2, K], fp32 fixpipe scales). Output
// per rank [M, K] fp16: out[t] = sum_k prob[t,k] * FFN_{expert[t,k]}(x[t]), FFN = int8 GMM1 ->
// SwiGLU with dynamic per-row int8 quant -> int8 GMM2 (README.md "Math").
#include "kernels/moe_ffn/op.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/device_barrier.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/moe_ffn/baseline.hpp"
#include "kernels/moe_ffn/expert_major.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_kernels.hpp"
#include "kernels/moe_ffn/moe_knobs.hpp"
#include "kernels/moe_ffn/moe_layout.hpp"
#include "kernels/moe_ffn/moe_slots.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "kernels/param_error.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

using namespace moe;

constexpr int kFront = 0, kGmm1 = 1, kSwiglu = 2, kGmm2 = 3, kCombine = 4, kMegaMoe = 5;

// The schedules (README.md "Variants").
enum class Plan { Bulk, PerExpert, ExpertMajor, Baseline };


void validate(const OpParams& p, const BufferLimits& lim) {
    const MoeShape s = moe_shape_of(p);
    check_positive(kParamM, p.m, 1, "1");
    check_positive(kParamK, p.k, kTileN, "256");
    check_positive(kParamN, p.n, kTileN, "256");
    check_multiple(kParamK, p.k, kTileN, "256", "GMM2's output tiles are 256 columns of K");
    check_multiple(kParamN, p.n, kTileN, "256", "GMM1's output tiles are 256 columns of N, and N/2 is GMM2's K in 128 steps");
    check_moe_routing(p);
    // UB: the stages whose buffers grow with K. FrontReorder holds a token's bf16, fp32 and |x|
    // rows, the packed row and two sort chunks; the combine block holds two rows in and out, an
    // fp32 row and Unpermute's chunks. The nearest valid K is the largest multiple of 256 below
    // that fits both.
    const auto front_ub = [&](const MoeShape& x) {
        return std::int64_t{x.k} * (2 + 4 + 4 + 1) + 32 + 2LL * 4 * std::min(x.routes(), kSortChunk) + 1024 + 64;
    };
    const auto combine_ub = [&](const MoeShape& x) { return combine_ub_bytes(x) + unpermute_ub_bytes(x); };
    if (front_ub(s) > lim.ub_bytes || combine_ub(s) > lim.ub_bytes) {
        MoeShape fits = s;
        while (fits.k > kTileN && (front_ub(fits) > lim.ub_bytes || combine_ub(fits) > lim.ub_bytes)) fits.k -= kTileN;
        const bool front = front_ub(s) > lim.ub_bytes;
        throw ParamError({{kParamK, p.k}},
                         fmt::format("{} in UB: {} bytes, above the {} bytes of {}",
                                     front ? "FrontReorder holds a token's rows and two sort chunks"
                                           : "Combine holds two rows in and out, an fp32 row and Unpermute's chunks",
                                     front ? front_ub(s) : combine_ub(s), lim.ub_bytes, lim.profile_name),
                         {{kParamK, fits.k}});
    }
    if (p.comm_blocks < 3 || p.comm_blocks > lim.aiv_cores) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}},
                         fmt::format("the stages' all-rank barriers need every block resident, and per_expert splits the AIVs "
                                     "in three groups: 3 to the {} AIV cores of {}",
                                     lim.aiv_cores, lim.profile_name),
                         {{kParamCommBlocks, std::clamp(p.comm_blocks, 3, std::max(3, lim.aiv_cores))}});
    }
    if (p.compute_blocks < 2 || p.compute_blocks > lim.aic_cores) {
        throw ParamError({{kParamComputeBlocks, p.compute_blocks}},
                         fmt::format("per_expert splits the AICs into GMM1 and GMM2 groups: 2 to the {} AIC cores of {}",
                                     lim.aic_cores, lim.profile_name),
                         {{kParamComputeBlocks, std::clamp(p.compute_blocks, 2, std::max(2, lim.aic_cores))}});
    }
}

// The published replicas: one MIX launch's clusters, each an AIC and two AIVs (expert_major's
// split 2/3 : 1/3 into the GMM1 and GMM2 groups).
void validate_published(const OpParams& p, const BufferLimits& lim) {
    validate(p, lim);
    if (p.compute_blocks < 3) {
        throw ParamError({{kParamComputeBlocks, p.compute_blocks}},
                         "the published kernel's clusters (expert_major splits them 2/3 : 1/3 into GMM1 and GMM2 "
                         "groups): at least 3",
                         {{kParamComputeBlocks, lim.aic_cores}});
    }
    if (p.comm_blocks != 2 * p.compute_blocks) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}, {kParamComputeBlocks, p.compute_blocks}},
                         fmt::format("the published kernel is one MIX launch: every cluster is an AIC and two AIVs, so the AIV "
                                     "blocks must be twice the AIC blocks ({})",
                                     2 * p.compute_blocks),
                         {{kParamCommBlocks, 2 * p.compute_blocks}});
    }
}

class MoeFfnRun final : public OpInstance {
public:
    MoeFfnRun(const OpParams& p, Plan plan)
        : p_(p), plan_(plan), overlapped_(plan != Plan::Bulk),
          tables_(std::make_shared<RouteTables>(make_route_tables(moe_shape_of(p)))), lay_(*tables_),
          slots_(std::make_shared<MoeSlots>(lay_.slots)), schedule_(expert_major_schedule(tables_->shape, p.compute_blocks)),
          mem_(p.ranks), ranks_(static_cast<std::size_t>(p.ranks)) {
        const std::string& f = p.fault;
        fault_ = f == "skip_last_route"    ? Fault::SkipLastRoute
                 : f == "drop_scale1"      ? Fault::DropScale1
                 : f == "flag_before_rows" ? Fault::FlagBeforeRows
                 : f == "stale_epoch"      ? Fault::StaleEpoch
                                           : Fault::None;
        const int aiv = p.comm_blocks, aic = p.compute_blocks;
        // The reference views (compute-only, sequential) run each stage on all the cores.
        all_blocks_ = StageBlocks{aiv, aiv, aic, aiv, aic, aiv, aiv};
        if (!overlapped_) {
            blocks_ = all_blocks_;
        } else {
            const int third = aiv / 3;
            const int g1 = std::max(1, aic * 2 / 3);
            blocks_ = StageBlocks{third, third, g1, third, aic - g1, aiv - 2 * third, aiv - 2 * third};
        }
    }

    std::vector<std::string> streams() const override {
        // The sequential view's stage streams, then the published kernel's one MIX launch.
        if (plan_ == Plan::ExpertMajor) return {"front", "gmm1", "swiglu", "gmm2", "combine", "megamoe_v1"};
        if (plan_ == Plan::Baseline) return {"front", "gmm1", "swiglu", "gmm2", "combine", "megamoe_baseline"};
        return {"front", "gmm1", "swiglu", "gmm2", "combine"};
    }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        const GmAllocation& l = mem_.allocate(rank, gm, lay_);
        if (gm.functional()) fill_moe_inputs(*tables_, lay_, rank, l);
    }

    void bind(int rank, const RankTensors& t) override {
        ranks_[static_cast<std::size_t>(rank)] = bind_moe_rank("moe_ffn", rank, t, lay_, mem_, tables_, slots_, fault_);
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const std::shared_ptr<const MoeRank> a = ranks_[static_cast<std::size_t>(rank)];
        const bool fused = kind != ViewKind::Sequential && overlapped_;
        const StageBlocks& b = fused ? blocks_ : all_blocks_;
        ViewPlan plan;
        const std::int64_t base = mem_.window_bases[static_cast<std::size_t>(rank)];
        const int E = tables_->shape.experts;
        const bool compute_only = kind == ViewKind::ComputeOnly;
        const bool v1 = plan_ == Plan::ExpertMajor && kind != ViewKind::Sequential;
        const bool published = (plan_ == Plan::ExpertMajor || plan_ == Plan::Baseline) && kind != ViewKind::Sequential;
        const bool stale = fault_ == Fault::StaleEpoch;
        plan.reset = [this, base, E, compute_only, b, v1, stale](HostContext& host) {
            if (!stale) host.write_signals(base + lay_.counters, lay_.slots.table.words(), 0);
            // Compute-only: the tokens are already in place (every expert dispatched).
            if (compute_only && v1) host.write_signals(base + lay_.counters + 4LL * lay_.slots.gmm1_ready, E, 1);
            else if (compute_only) host.write_signals(base + lay_.counters + 4LL * lay_.slots.dispatched, E, b.dispatch);
            lay_.barrier1.host_reset(host, base);
            lay_.barrier2.host_reset(host, base);
        };
        auto phase = [](PhaseRole role, int stream, KernelLaunch k) {
            ViewPhase ph;
            ph.role = role;
            ph.launches.push_back(StreamLaunch{stream, std::move(k)});
            return ph;
        };
        if (published) {
            // The published kernel: one MIX launch (its FFN parts alone for compute-only).
            plan.phases.push_back(phase(compute_only ? PhaseRole::Compute : PhaseRole::Both, kMegaMoe,
                                        v1 ? expert_major_kernel(a, schedule_, compute_only)
                                           : baseline_kernel(a, baseline_schedule(tables_->shape, p_.compute_blocks), compute_only)));
            return plan;
        }
        if (compute_only && overlapped_) {
            // The variant's FFN stages at once on their core groups, the tokens already in place.
            ViewPhase ph;
            ph.role = PhaseRole::Compute;
            ph.launches = {StreamLaunch{kGmm2, gmm2_kernel(a, blocks_)}, StreamLaunch{kSwiglu, swiglu_kernel(a, blocks_)},
                           StreamLaunch{kGmm1, gmm1_kernel(a, blocks_)}};
            plan.phases.push_back(std::move(ph));
            return plan;
        }
        if (compute_only) {
            plan.phases.push_back(phase(PhaseRole::Compute, kGmm1, gmm1_kernel(a, b)));
            plan.phases.push_back(phase(PhaseRole::Compute, kSwiglu, swiglu_kernel(a, b)));
            plan.phases.push_back(phase(PhaseRole::Compute, kGmm2, gmm2_kernel(a, b)));
            return plan;
        }
        if (fused) {
            ViewPhase ph;
            ph.role = PhaseRole::Both;
            ph.launches = {StreamLaunch{kCombine, combine_kernel(a, b, true)},
                           StreamLaunch{kGmm2, gmm2_kernel(a, b)},
                           StreamLaunch{kSwiglu, swiglu_kernel(a, b)},
                           StreamLaunch{kGmm1, gmm1_kernel(a, b)},
                           StreamLaunch{kFront, front_reorder_kernel(a, b, ThenDispatch::Pull)}};
            plan.phases.push_back(std::move(ph));
            return plan;
        }
        // Sequential (and bulk's pipelined view): each stage to completion.
        plan.phases.push_back(phase(PhaseRole::Comm, kFront, front_reorder_kernel(a, b, ThenDispatch::None)));
        plan.phases.push_back(phase(PhaseRole::Comm, kFront, dispatch_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kGmm1, gmm1_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kSwiglu, swiglu_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kGmm2, gmm2_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Comm, kCombine, combine_kernel(a, b, false)));
        plan.phases.push_back(phase(PhaseRole::Comm, kCombine, unpermute_kernel(a, b)));
        return plan;
    }

    std::vector<std::string> stage_names() const override { return moe_stage_names(); }

    std::string signal_name(int rank, std::int64_t address) const override {
        const std::int64_t base = mem_.window_bases.at(static_cast<std::size_t>(rank));
        return base < 0 ? std::string{} : lay_.signal_name(rank, address - base);
    }

private:
    OpParams p_;
    Plan plan_;
    bool overlapped_;
    Fault fault_ = Fault::None;
    std::shared_ptr<RouteTables> tables_;
    MoeLayout lay_;
    std::shared_ptr<const MoeSlots> slots_;
    ExpertMajorSchedule schedule_;
    StageBlocks blocks_;
    StageBlocks all_blocks_;
    MoeAllocations mem_;
    std::vector<std::shared_ptr<const MoeRank>> ranks_;
};

// The results' extras: rows per local expert (rank-major) and per rank, and the bytes each rank
// receives from its peers in the dispatch (packed rows) and in the combine (fp16 rows).
std::map<std::string, std::vector<double>> moe_extras(const OpParams& p) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    const MoeShape& s = t.shape;
    std::map<std::string, std::vector<double>> x;
    auto& per_expert = x["moe_rows_per_expert"];
    auto& per_rank = x["moe_rows_per_rank"];
    auto& dispatched = x["moe_dispatch_bytes_in_per_rank"];
    auto& combined = x["moe_combine_bytes_in_per_rank"];
    for (int r = 0; r < s.ranks; ++r) {
        double in = 0, back = 0;
        for (int e = 0; e < s.experts; ++e) {
            per_expert.push_back(t.recv_rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(e)]);
            for (int src = 0; src < s.ranks; ++src)
                if (src != r) in += t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(r * s.experts + e)];
        }
        for (int g = 0; g < s.global_experts(); ++g)
            if (g / s.experts != r) back += t.count[static_cast<std::size_t>(r)][static_cast<std::size_t>(g)];
        per_rank.push_back(t.recv_total[static_cast<std::size_t>(r)]);
        dispatched.push_back(in * s.packed_row_bytes());
        combined.push_back(back * 2.0 * s.k);
    }
    return x;
}

VariantDesc moe_defaults() {
    VariantDesc v;
    v.dtypes = {DType::BF16, DType::F16};  // x: bf16 as the published build, or fp16 (its README: half/bf16)
    v.out_dtypes = {DType::F16};
    v.default_shape = std::array<int, 3>{2048, 7168, 4096};
    v.knobs = moe_knob_descs();
    v.faults = {"skip_last_route", "drop_scale1"};
    v.validate = validate;
    v.workspace_bytes = [](const OpParams& p) {
        const MoeLayout l(make_route_tables(moe_shape_of(p)));
        return static_cast<double>(l.window + l.local);
    };
    v.effective_knobs = moe_knobs;
    v.constraints = "K and N multiples of 256; K <= about 8K (UB); 3 <= comm blocks <= AIV cores; 2 <= compute blocks; "
                    "bf16 (or fp16) x, fp16 out; no bias";
    return v;
}

}  // namespace

const OpDesc& moe_ffn_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "moe_ffn";
        d.title = "MoE FFN (EP dispatch + int8 GMM + combine)";
        d.doc = "expert-parallel MoE layer: route sort, dispatch all-to-all-v, int8 GMM1 -> SwiGLU + int8 quant -> int8 "
                "GMM2 per expert, combine and top-K weighted unpermute (the published MegaMoE kernel's math)";
        // x is the rank's own [M, K]: A, replicated in shape, its values the caller's (B is unused:
        // the experts' weights are the op's); the output has x's shape.
        d.sharding = Sharding{Split::Replicated, Split::Replicated, false, Split::Replicated, /*out_like_a=*/true};
        d.comm_kind = "alltoallv";
        d.comm_payload_bytes = [](const OpParams& p) {
            // Rows this rank receives from peers: dispatch (K + 32 B each) and combine (2K B each).
            const RouteTables t = make_route_tables(moe_shape_of(p));
            return t.rows_from_peers(0) * t.shape.packed_row_bytes() + t.rows_back_from_peers(0) * 2.0 * t.shape.k;
        };
        d.test_shape = [](int ranks) { return RunShape{ranks, 16, 256, 512, 128, 256, std::nullopt, std::nullopt}; };
        d.bench_shape = RunShape{8, 128, 1024, 1024};
        d.scale_shape = RunShape{64, 128, 7168, 4096};
        VariantDesc bulk = derive_variant(moe_defaults(), "bulk",
                                          "each stage to completion: reorder + quant, dispatch all-to-all-v, GMM1, SwiGLU, "
                                          "GMM2, combine all-to-all, unpermute (the sequential reference)");
        bulk.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::Bulk); };
        VariantDesc per_expert = derive_variant(moe_defaults(), "per_expert",
                                                "the stages on their own core groups at once, handing over expert by expert "
                                                "through GM counters (the published kernel's structure, simplified)");
        per_expert.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::PerExpert); };
        VariantDesc expert_major =
            derive_variant(moe_defaults(), "expert_major",
                           "replica of the published MegaMoE V1 (expert-major): fixed AIC/AIV groups (GMM1 on 24 then 16 "
                           "AICs, GMM2 on 8 joined by 16), per-expert arrival/ready signals with coordinators, the per-M "
                           "knob table, the three sort paths, count-as-flag, two Unpermute phases");
        expert_major.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::ExpertMajor); };
        expert_major.validate = validate_published;
        // The replicas' FrontReorder takes the published sort path by M x topK: on 4 ranks enough
        // routes (6400 > 6144) for the MultiCore path and its post-sort steps, whose inverse step
        // stores 4-byte words of one 32-byte block from many AIVs at once (docs/ops/moe_ffn.md);
        // on 2 and 8 the FullLoad path.
        expert_major.test_shape = [](int ranks) { return RunShape{ranks, ranks == 4 ? 800 : 16, 256, 512, 128, 256, std::nullopt, std::nullopt}; };
        expert_major.faults = {"skip_last_route", "drop_scale1", "flag_before_rows", "stale_epoch"};
        VariantDesc baseline =
            derive_variant(moe_defaults(), "baseline",
                           "replica of the published MegaMoE baseline (the overview's version): AIVs stage by stage "
                           "(dispatch with a SYNCALL per expert, SwiGLU per segment, combine, CrossRankSync, unpermute), "
                           "GMM1 then GMM2 on all AICs, FFTS hard flags per expert and per segment");
        baseline.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::Baseline); };
        baseline.validate = validate_published;
        baseline.test_shape = expert_major.test_shape;
        baseline.faults = {"skip_last_route", "drop_scale1"};
        d.variants = {per_expert, bulk, expert_major, baseline};
        d.own_math = OwnMath{[](const OpParams& p, int rank, const std::vector<OwnMathInput>& x) {
                                 return golden_rank(moe_shape_of(p), rank, x[static_cast<std::size_t>(rank)]);
                             }, 1e-4, 1e-3, 1e-3,
                             "the published host's check: |a - e| > atol + rtol |e| with atol 1e-4, rtol 1e-3, at most "
                             "floor(rtol x numel) elements may err",
                             moe_extras};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
