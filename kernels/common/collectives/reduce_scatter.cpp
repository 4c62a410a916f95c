#include "kernels/common/collectives/reduce_scatter.hpp"

#include "kernels/common/collectives/collective_steps.hpp"

namespace tandem::kernels::collectives {

namespace {
Task reduce_scatter_kernel(BlockCtx& blk, CollectiveArgs a) {
    if (a.layout.ranks < 2) co_return;
    UbStage ub(blk, a.layout.grid.tile_rows, a.layout.grid.tile_cols, a.layout.dtype);
    if (a.algo == CollectiveAlgo::Mesh) {
        co_await steps::mesh_push_partials(blk, a, ub);
        co_await steps::mesh_reduce_own(blk, a, ub, /*broadcast=*/false);
    } else {
        co_await steps::ring_reduce_scatter(blk, a, ub, /*send_reduced=*/false);
    }
    ub.drain();
}
}  // namespace

KernelLaunch make_reduce_scatter_kernel(const CollectiveArgs& args) {
    check_collective_args(args);
    return KernelLaunch{args.algo == CollectiveAlgo::Mesh ? "HcclReduceScatterMesh" : "HcclReduceScatterRing",
                        CoreType::AIV, args.layout.blocks,
                        [args](BlockCtx& blk) { return reduce_scatter_kernel(blk, args); }};
}

}  // namespace tandem::kernels::collectives
