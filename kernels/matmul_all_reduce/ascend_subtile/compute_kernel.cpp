// GemmComputeKernel (AIC) of the newer version: the older kernel (ascend/compute_kernel.cpp)
// with the balanced split: block b computes its contiguous range of linear tiles (base + 1 or
// base of them, SubtileArTiling) in the boustrophedon order.
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"

namespace tandem::kernels {

KernelLaunch make_subtile_compute_kernel(const SubtileArArgs& args) {
    const SubtileArTiling& t = args.tiling;
    GemmComputeJob job{AscendArTiling(t.shape()), args.a, args.b, args.gemm_output, args.queues, args.my_rank,
                       args.queue_base, {}, {}, args.fault == SubtileArFault::SkipLastKTile};
    for (int b = 0; b < t.shape().compute_blocks; ++b) {
        job.first.push_back(t.block_first(b));
        job.count.push_back(t.block_count(b));
    }
    return make_gemm_compute_kernel(job);
}

}  // namespace tandem::kernels
