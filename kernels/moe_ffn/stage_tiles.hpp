#pragma once
// Tile helpers of moe_ffn's stage pieces (moe_stages_*.cpp): flags between pipes, views of part
// of a tile, and handing a view's hazard times back to its tile.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "sim/core/tile.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe::tiles {

inline std::size_t sz(int v) { return static_cast<std::size_t>(v); }

// Orders pipe `a`'s work before pipe `b`'s next instruction (set_flag + wait_flag).
inline void sync(BlockCtx& blk, Pipe a, Pipe b) {
    set_flag(blk, a, b, 0);
    wait_flag(blk, a, b, 0);
}

// A tile standing for the first `rows` rows and `cols` columns of `base` (row-major; a prefix of
// its storage when cols == base.cols or rows == 1). fold() hands its hazard times back.
inline Tile view(const Tile& base, int rows, int cols) {
    Tile v = base;
    v.rows = rows;
    v.cols = cols;
    return v;
}

// Rows [r0, r0 + rows) of `base`, columns [c0, c0 + cols): a tile of its own storage when it is
// contiguous there (one row, or whole rows).
inline Tile part(const Tile& base, int r0, int rows, int c0, int cols) {
    Tile v = base;
    const std::int64_t skip = (std::int64_t{r0} * base.cols + c0) * dtype_bytes(base.dtype);
    v.rows = rows;
    v.cols = cols;
    v.offset_bytes += skip;
    if (v.data != nullptr) v.data += skip;
    return v;
}

inline void fold(Tile& base, const Tile& v) {
    base.write_end = std::max(base.write_end, v.write_end);
    base.read_end = std::max(base.read_end, v.read_end);
    if (v.write_end >= base.write_end) base.last_writer = v.last_writer;
}

}  // namespace tandem::kernels::moe::tiles
