#pragma once
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// GEMM + all-gather of C: A split by rows, B replicated; each rank computes its row block of C
// and every rank ends up with all of C (M x N).
const OpDesc& matmul_all_gather_op();

}  // namespace tandem::kernels
