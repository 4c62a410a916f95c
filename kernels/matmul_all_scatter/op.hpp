#pragma once
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// GEMM + all-scatter (Iris's "GEMM + All scatter"): A replicated, B split by columns; each rank
// computes its column block of C and sends it to every rank, so every rank holds all of C.
const OpDesc& matmul_all_scatter_op();

}  // namespace tandem::kernels
