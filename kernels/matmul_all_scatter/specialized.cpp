// matmul_all_scatter --variant specialized (Iris's "specialized"): one MIX kernel whose clusters
// are split between the GEMM (--gemm-blocks) and the scatter (the rest of --total-blocks, Iris's
// --total_sms; Iris's --gemm_sms is --compute-blocks on every surface, docs/PARAMETERS.md): GEMM
// clusters compute and flag tiles, the other clusters' AIVs push them to every peer.
#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/comm_tile_knobs.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_scatter/mas_run.hpp"
#include "kernels/matmul_all_scatter/variants.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mas {

namespace {

void validate_specialized(const OpParams& p, const BufferLimits& lim) {
    validate_common(p, lim);
    const int clusters = clusters_of(lim);
    check_knob_range(p, "total_blocks", 2, clusters,
                     "the MIX kernel's clusters must all be resident (scatter clusters spin on flags) and "
                     "include a GEMM and a scatter cluster:");
    const int total = total_blocks(p);
    if (total < 2 || total > clusters) {
        throw ParamError({ParamValue::knob("total_blocks", total)},
                         fmt::format("the MIX kernel needs 2..{} clusters on {} (all resident, at least one GEMM and "
                                     "one scatter cluster)",
                                     clusters, lim.profile_name),
                         {ParamValue::knob("total_blocks", std::clamp(total, 2, clusters))});
    }
    check_knob_range(p, "gemm_blocks", 1, total - 1, "GEMM clusters (the rest scatter) number");
}

class SpecializedRun final : public MasRun {
public:
    using MasRun::MasRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const OpParams& p = params();
        const GemmBlockArgs flagged = args(rank, /*flagged=*/true);
        const StreamKGemm gemm_sk = stream_k() ? stream_k_gemm(flagged, rank, gemm_blocks(p)) : local_stream_k(rank);
        HostAction reset = [this, rank, sk = stream_k(), gemm_sk](HostContext& host) {
            reset_flags(host, rank);
            if (sk) reset_stream_k_counters(host, gemm_sk);
        };
        const KernelLaunch k =
            stream_k() ? make_block_specialized_stream_k_kernel("MatmulScatterSpecializedStreamKKernel", flagged, gemm_sk,
                                                                total_blocks(p))
                       : make_block_specialized_kernel("MatmulScatterSpecializedKernel", flagged, gemm_blocks(p),
                                                       total_blocks(p));
        return launched_together(std::move(reset), {{kGemmStream, k}});
    }
};

}  // namespace

VariantDesc specialized_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "specialized",
                                   "one MIX kernel: gemm_blocks clusters compute and flag tiles, the other clusters' "
                                   "AIVs scatter them");
    v.constraints += "; 1 <= gemm-blocks < total-blocks <= clusters";
    v.validate = validate_specialized;
    v.schedules = gemm_schedule_names();
    v.faults.push_back("skip_fixup_partial");
    v.knobs.push_back(KnobDesc{"gemm_blocks", {},
                               "specialized: clusters computing the GEMM (default: 5/6 of the total)",
                               {2, 4, 8, 12, 16, 20}});
    v.knobs.push_back(KnobDesc{"total_blocks", {"--total_sms"},
                               "specialized: clusters of the MIX kernel (Iris's --total_sms; default: --compute-blocks)",
                               {}});
    v.effective_knobs = [](const OpParams& p) {
        std::map<std::string, int> knobs = comm_tile_effective_knobs(p);
        knobs["gemm_blocks"] = gemm_blocks(p);
        knobs["total_blocks"] = total_blocks(p);
        return knobs;
    };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<SpecializedRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mas
