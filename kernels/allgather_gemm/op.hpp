#pragma once
// The AllGather+GEMM op (the Ascend seed) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& allgather_gemm_op();

}  // namespace tandem::kernels
