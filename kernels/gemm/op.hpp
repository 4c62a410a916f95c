#pragma once
// gemm (C = A x B on each chip, no communication) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& gemm_op();

}  // namespace tandem::kernels
