#pragma once
// The baseline all-reduce (HCCL on the vector cores; collective.hpp for the data model): every
// rank's buffer becomes the sum over ranks. A reduce-scatter then an all-gather in one kernel, the
// reduced tile going from UB straight to the peers: mesh (sum own slice, store it into every peer)
// or ring (2(W-1) steps to the next rank).
#include "kernels/common/collectives/collective.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::collectives {

// An AIV launch of args.layout.blocks blocks ("HcclAllReduceMesh" / "HcclAllReduceRing").
KernelLaunch make_all_reduce_kernel(const CollectiveArgs& args);

}  // namespace tandem::kernels::collectives
