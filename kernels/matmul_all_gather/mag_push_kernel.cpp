#include "kernels/matmul_all_gather/mag_push_kernel.hpp"

namespace tandem::kernels {

namespace {
Task push_then_barrier(BlockCtx& blk, collectives::TileScatter s, DeviceBarrier b) {
    co_await collectives::scatter_tiles(blk, s, blk.block_idx(), blk.block_num());
    // scatter_tiles drained its UbStage and the barrier drains the pipes again before it
    // announces arrival: a peer past the barrier sees every tile this rank sent.
    co_await device_barrier(blk, b);
}
}  // namespace

KernelLaunch make_mag_push_kernel(const collectives::TileScatter& scatter, const DeviceBarrier& barrier, int blocks) {
    return KernelLaunch{"MatmulAllGatherPushKernel", CoreType::AIV, blocks,
                        [scatter, barrier](BlockCtx& blk) { return push_then_barrier(blk, scatter, barrier); }};
}

}  // namespace tandem::kernels
