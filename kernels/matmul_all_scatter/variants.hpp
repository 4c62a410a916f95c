#pragma once
// The variants of matmul_all_scatter, as Iris names them (each in its own file; mas_run.hpp is
// what they share).
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mas {

// Each is the op's defaults (mas_defaults) refined.
VariantDesc bulk_sync_variant(const VariantDesc& defaults);
VariantDesc fused_sequential_variant(const VariantDesc& defaults);
VariantDesc producer_consumer_variant(const VariantDesc& defaults);
VariantDesc specialized_variant(const VariantDesc& defaults);

// What every variant shares: fused_gemm_defaults, the output in the window (peers store their
// column blocks into it), validate_common, the workspace, the comm tile knobs, the GEMM and
// push faults.
VariantDesc mas_defaults();

}  // namespace tandem::kernels::mas
