#pragma once
// The slice of a bias vector one output tile adds (docs/ops/README.md: a vector of M or of N, broadcast,
// added once), as the GEMM tile pipeline's load_bias takes it: 1 x base_n (one value per column,
// Ascend's bias table) or base_m x 1 (one per row). The host places the bias as one 1 x len ND
// row, padded to whole tiles.
#include "kernels/op_desc.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels {

// The bias of the output tile whose first row is `row0` and first column `col0` of the global C
// (an invalid tensor when `kind` is None).
inline GmTensor bias_tile_slice(const GmTensor& bias, BiasKind kind, int row0, int col0, int base_m, int base_n) {
    if (kind == BiasKind::N) return bias.sub(0, col0, 1, base_n);
    if (kind == BiasKind::M) {
        // base_m consecutive elements seen as a column (ND with a row stride of one element).
        const std::int64_t offset = bias.element_offset(0, row0);
        return GmTensor(bias.allocation(), offset, base_m, 1, 1, bias.dtype(), Layout::ND);
    }
    return GmTensor{};
}

}  // namespace tandem::kernels
