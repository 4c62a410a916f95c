#include "kernels/common/collectives/comm_grid.hpp"

#include <numeric>

namespace tandem::kernels::collectives {

int comm_tile_rows(int rows_multiple, int cols, DType dtype) {
    const std::int64_t row_bytes = std::int64_t{cols} * dtype_bytes(dtype);
    int best = 1;
    for (int d = 1; d <= rows_multiple; ++d) {
        if (rows_multiple % d == 0 && d * row_bytes <= kCommTileBytes) best = d;
    }
    return best;
}

CommGrid make_comm_grid(int rows, int cols, DType dtype, int rows_multiple) {
    const std::int64_t elem = dtype_bytes(dtype);
    int tile_cols = 1;
    for (int d = 1; d <= cols; ++d) {
        if (cols % d == 0 && d * elem <= kCommTileBytes) tile_cols = d;
    }
    const int tile_rows = comm_tile_rows(std::gcd(rows, rows_multiple > 0 ? rows_multiple : rows), tile_cols, dtype);
    return CommGrid{rows, cols, tile_rows, tile_cols};
}

}  // namespace tandem::kernels::collectives
