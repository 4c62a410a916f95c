#pragma once
// The variant of allgather_gemm (streaming.cpp).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::ag {

// The published kernel pair, as the op's one variant (fp16 in, fp32 out, no bias: VariantDesc's
// own defaults).
VariantDesc streaming_variant();

}  // namespace tandem::kernels::ag
