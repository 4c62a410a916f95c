#pragma once
// matmul_all_reduce --variant ascend: a replica of Ascend's published GEMM+AllReduce example
// (kernels/matmul_all_reduce/ascend/README.md), as a variant description the op lists.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// The op's defaults refined (replica.hpp: ascend_replica_defaults).
VariantDesc ascend_all_reduce_variant(const VariantDesc& op_defaults);

}  // namespace tandem::kernels
