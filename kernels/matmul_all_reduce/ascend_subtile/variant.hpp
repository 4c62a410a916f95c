#pragma once
// matmul_all_reduce --variant ascend_subtile: a replica of the newer version of Ascend's
// published GEMM+AllReduce example (subtile-ready / AG-summary overlap; README.md in this
// folder), as a variant description the op lists.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// The op's defaults refined (ascend/replica.hpp: ascend_replica_defaults).
VariantDesc ascend_subtile_all_reduce_variant(const VariantDesc& op_defaults);

}  // namespace tandem::kernels
