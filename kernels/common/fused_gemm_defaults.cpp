#include "kernels/common/fused_gemm_defaults.hpp"

#include "kernels/common/panel_k.hpp"

namespace tandem::kernels {

Padding whole_tile_padding(const OpParams& p) { return Padding{p.base_m, p.base_n, panel_k_for(p.base_n, p.dtype)}; }

VariantDesc fused_gemm_defaults() {
    VariantDesc v;
    v.dtypes = {DType::F16, DType::BF16, DType::F32, DType::I8};
    v.out_dtypes = {DType::F32, DType::F16, DType::BF16};
    v.takes_bias = true;
    v.padding = whole_tile_padding;
    return v;
}

}  // namespace tandem::kernels
