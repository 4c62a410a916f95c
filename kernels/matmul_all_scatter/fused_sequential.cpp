// matmul_all_scatter --variant fused_sequential (Iris's "fused_sequential"): one persistent AIC
// kernel storing each finished tile into every rank's output straight from L0C (FIX); under
// stream_k/hybrid a MIX kernel, whose split tiles are stored from UB after their fix-up.
#include "kernels/common/op_checks.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_scatter/mas_run.hpp"
#include "kernels/matmul_all_scatter/variants.hpp"

namespace tandem::kernels::mas {

namespace {

void validate_fused(const OpParams& p, const BufferLimits& lim) {
    validate_common(p, lim);
    check_stream_k_blocks(p, lim);
}

class FusedSequentialRun final : public MasRun {
public:
    using MasRun::MasRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const GemmBlockArgs local = args(rank, /*flagged=*/false);
        const KernelLaunch fused =
            stream_k() ? make_stream_k_gemm_kernel("MatmulScatterFusedSequentialStreamKKernel", local_stream_k(rank),
                                                   local.to_every_rank())
                       : make_block_fused_sequential_kernel("MatmulScatterFusedSequentialKernel", local,
                                                            params().compute_blocks);
        return launched_together(reset_local_stream_k(rank), {{kGemmStream, fused}});
    }
};

}  // namespace

VariantDesc fused_sequential_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "fused_sequential",
                                   "one AIC kernel: each finished tile stored from L0C into every rank's output "
                                   "(stream_k/hybrid: a MIX kernel, split tiles stored from UB after their fix-up)");
    v.schedules = gemm_schedule_names();
    v.faults.push_back("skip_fixup_partial");
    v.validate = validate_fused;
    v.knobs.clear();  // no comm tiles: the cube stores whole tiles
    v.effective_knobs = nullptr;
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<FusedSequentialRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mas
