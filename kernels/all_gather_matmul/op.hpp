#pragma once
// all_gather_matmul (Iris's ops.all_gather_matmul): A split along K, B replicated, every rank
// computes C = all_gather(A) x B (+ bias). Variants pull, push, staged (docs/ops/all_gather_matmul.md).
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& all_gather_matmul_op();

}  // namespace tandem::kernels
