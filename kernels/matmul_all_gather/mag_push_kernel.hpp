#pragma once
// matmul_all_gather's push kernel (AIV): each finished row-block tile of C, once the GEMM has
// flagged it, is pushed to every peer (kernels/common/collectives/scatter_tiles); then a device
// barrier across the ranks (kernels/common/device_barrier) ends the op only when every rank's
// pushes have landed, so when a rank's kernel returns its output holds all of C.
#include <string>

#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/device_barrier.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels {

// An AIV launch of `blocks` blocks (all resident at once: the barrier waits for every block).
KernelLaunch make_mag_push_kernel(const collectives::TileScatter& scatter, const DeviceBarrier& barrier, int blocks);

}  // namespace tandem::kernels
