#include "kernels/common/collectives/all_reduce.hpp"

#include "kernels/common/collectives/collective_steps.hpp"

namespace tandem::kernels::collectives {

namespace {
Task all_reduce_kernel(BlockCtx& blk, CollectiveArgs a) {
    if (a.layout.ranks < 2) co_return;
    UbStage ub(blk, a.layout.grid.tile_rows, a.layout.grid.tile_cols, a.layout.dtype);
    if (a.algo == CollectiveAlgo::Mesh) {
        co_await steps::mesh_push_partials(blk, a, ub);
        co_await steps::mesh_reduce_own(blk, a, ub, /*broadcast=*/true);
        co_await steps::mesh_wait_gathered(blk, a);
    } else {
        co_await steps::ring_reduce_scatter(blk, a, ub, /*send_reduced=*/true);
        co_await steps::ring_all_gather(blk, a, ub, /*first_step=*/1);
    }
    ub.drain();
}
}  // namespace

KernelLaunch make_all_reduce_kernel(const CollectiveArgs& args) {
    check_collective_args(args);
    return KernelLaunch{args.algo == CollectiveAlgo::Mesh ? "HcclAllReduceMesh" : "HcclAllReduceRing", CoreType::AIV,
                        args.layout.blocks, [args](BlockCtx& blk) { return all_reduce_kernel(blk, args); }};
}

}  // namespace tandem::kernels::collectives
