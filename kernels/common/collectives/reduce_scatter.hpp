#pragma once
// The baseline reduce-scatter (HCCL on the vector cores; collective.hpp for the data model):
// afterwards slice r of rank r's buffer holds the sum over ranks. Mesh: every rank writes its
// partial of slice q into q's inbox, q sums; ring: W-1 steps to the next rank.
#include "kernels/common/collectives/collective.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::collectives {

// An AIV launch of args.layout.blocks blocks ("HcclReduceScatterMesh" / "HcclReduceScatterRing").
KernelLaunch make_reduce_scatter_kernel(const CollectiveArgs& args);

}  // namespace tandem::kernels::collectives
