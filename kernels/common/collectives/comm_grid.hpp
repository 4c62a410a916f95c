#pragma once
// How the collectives (and the fused ops' communication) cut a matrix: into equal "comm tiles"
// of tile_rows x tile_cols (Iris's COMMUNICATION_TILE_M x _N), the unit one vector core loads
// into UB, adds and stores in one instruction each. Tiles are numbered row-major; a rank's
// slice of a collective is a contiguous range of tile numbers (split_even), as HCCL cuts a
// buffer into contiguous per-rank parts. Every tile has the same shape (the matrix is padded
// to whole tiles), so one UB buffer fits every transfer.
#include <cstdint>

#include "sim/mem/dtype.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels::collectives {

// UB bytes of one comm tile: four of them (two accumulators, two inputs) fit in the vector
// core's unified buffer with room to spare, so a load overlaps the previous tile's stores.
inline constexpr std::int64_t kCommTileBytes = 32 * 1024;

// The rows of a comm tile `cols` wide: the largest divisor of `rows_multiple` whose tile fits
// in kCommTileBytes (at least 1), so comm tiles stack exactly inside a rows_multiple-row tile.
int comm_tile_rows(int rows_multiple, int cols, DType dtype);

struct CommGrid;
// The comm grid of a rows x cols matrix of `dtype`: tiles as wide as the matrix when a row fits
// in kCommTileBytes (else the widest divisor of cols that fits), as tall as fits, their rows
// dividing `rows_multiple` (pass the rows of each rank's block, e.g. M / ranks, when a rank's
// slice must be whole row blocks; `rows` itself when nothing more is asked).
CommGrid make_comm_grid(int rows, int cols, DType dtype, int rows_multiple);

struct CommGrid {
    int rows = 0;  // the matrix (a multiple of tile_rows)
    int cols = 0;  // (a multiple of tile_cols)
    int tile_rows = 0;
    int tile_cols = 0;

    int row_tiles() const { return rows / tile_rows; }
    int col_tiles() const { return cols / tile_cols; }
    int tiles() const { return row_tiles() * col_tiles(); }
    GmTensor tile(const GmTensor& m, int i) const {
        return m.sub(i / col_tiles() * tile_rows, i % col_tiles() * tile_cols, tile_rows, tile_cols);
    }
};

// A contiguous range [first, first + count).
struct Range {
    int first = 0;
    int count = 0;
};

// Part i of `parts` of [0, n): sizes differ by at most one, in order.
inline Range split_even(int n, int parts, int i) {
    const std::int64_t a = std::int64_t{n} * i / parts;
    const std::int64_t b = std::int64_t{n} * (i + 1) / parts;
    return Range{static_cast<int>(a), static_cast<int>(b - a)};
}

// A stack of `slots` comm tiles (a staging buffer or an inbox): slot s is rows
// [s * tile_rows, (s + 1) * tile_rows) of a (slots * tile_rows) x tile_cols matrix.
inline GmTensor slot_tile(const GmTensor& stack, int tile_rows, int s) {
    return stack.sub(s * tile_rows, 0, tile_rows, stack.cols());
}

}  // namespace tandem::kernels::collectives
