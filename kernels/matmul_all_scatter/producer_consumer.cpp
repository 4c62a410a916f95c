// matmul_all_scatter --variant producer_consumer (Iris's "producer_consumer"): the GEMM (AIC) and
// the scatter (AIV) kernels on two streams; the GEMM raises each stored tile's ready flag, the
// scatter waits on it and pushes the tile to every peer.
#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_scatter/mas_run.hpp"
#include "kernels/matmul_all_scatter/variants.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mas {

namespace {

class ProducerConsumerRun final : public MasRun {
public:
    using MasRun::MasRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const GemmBlockArgs flagged = args(rank, /*flagged=*/true);
        const KernelLaunch consumer =
            collectives::make_scatter_kernel("ScatterConsumerKernel", flagged.scatter(), params().comm_blocks);
        // The consumer first, as the Ascend seed launches its comm kernel before the compute
        // kernel: it is waiting on its first flag when the GEMM starts.
        return launched_together([this, rank](HostContext& host) { reset_flags(host, rank); },
                                 {{kCommStream, consumer},
                                  {kGemmStream, make_block_gemm_kernel("MatmulScatterGemmKernel", flagged,
                                                                       params().compute_blocks)}});
    }
};

}  // namespace

VariantDesc producer_consumer_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "producer_consumer",
                                   "GEMM (AIC) and scatter (AIV) kernels on two streams; the GEMM flags each stored "
                                   "tile, the scatter waits on it and pushes it to every peer");
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<ProducerConsumerRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mas
