// matmul_all_scatter --variant bulk_sync (Iris's "bulk_sync"): the GEMM kernel, then the scatter
// kernel on the same stream, so the kernel boundary is the barrier between them: no overlap, the
// fused variants' reference inside one timed phase.
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_scatter/mas_run.hpp"
#include "kernels/matmul_all_scatter/variants.hpp"

namespace tandem::kernels::mas {

namespace {

class BulkSyncRun final : public MasRun {
public:
    using MasRun::MasRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        return launched_together(reset_local_stream_k(rank), {{kGemmStream, local_gemm(rank)}, {kGemmStream, scatter(rank)}});
    }
};

}  // namespace

VariantDesc bulk_sync_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "bulk_sync", "GEMM kernel, then the scatter kernel on the same stream (no overlap)");
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<BulkSyncRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mas
