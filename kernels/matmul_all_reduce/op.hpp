#pragma once
// matmul_all_reduce (GEMM AllReduce) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& matmul_all_reduce_op();

}  // namespace tandem::kernels
