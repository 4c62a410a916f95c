#include "kernels/common/fused_gemm_defaults.hpp"

namespace tandem::kernels {

Padding whole_tile_padding(const OpParams& p) { return Padding{p.base_m, p.base_n, p.base_n}; }

VariantDesc fused_gemm_defaults() {
    VariantDesc v;
    v.dtypes = {DType::F16, DType::BF16};
    v.out_dtypes = {DType::F32, DType::F16, DType::BF16};
    v.takes_bias = true;
    v.padding = whole_tile_padding;
    return v;
}

}  // namespace tandem::kernels
