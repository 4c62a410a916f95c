#pragma once
// matmul_reduce_scatter (GEMM ReduceScatter) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& matmul_reduce_scatter_op();

}  // namespace tandem::kernels
