#include "kernels/allgather_gemm/allgather_gemm.hpp"

namespace tandem::kernels {

GmTensor AgGemmArgs::a_in_window(int rank) const {
    const AgGemmShape& s = tiling.shape;
    return GmTensor(*windows[static_cast<std::size_t>(rank)], window.a_offset, s.m, s.k, s.k, DType::F16, Layout::ND);
}

GmTensor AgGemmArgs::b_matrix() const {
    const AgGemmShape& s = tiling.shape;
    return GmTensor(*b, 0, s.k, s.n, s.k, DType::F16, Layout::DN);
}

GmTensor AgGemmArgs::c_matrix() const {
    const AgGemmShape& s = tiling.shape;
    return GmTensor(*c, 0, s.m, s.n, s.n, DType::F32, Layout::ND);
}

}  // namespace tandem::kernels
