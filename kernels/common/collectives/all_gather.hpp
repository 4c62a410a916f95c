#pragma once
// The baseline all-gather (HCCL on the vector cores; collective.hpp for the data model): slice r
// of rank r's buffer ends up in every rank's buffer. Mesh: each rank writes its slice into every
// peer at once; ring: W-1 steps, each rank forwarding what it received to the next rank.
#include "kernels/common/collectives/collective.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::collectives {

// An AIV launch of args.layout.blocks blocks ("HcclAllGatherMesh" / "HcclAllGatherRing").
KernelLaunch make_all_gather_kernel(const CollectiveArgs& args);

}  // namespace tandem::kernels::collectives
