#include "sim/isa/tile_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "sim/isa/deferred_cube.hpp"
#include "sim/mem/element.hpp"
#include "sim/mem/gm_deferred.hpp"

namespace tandem {

namespace {
std::size_t row_bytes(const Tile& t) { return static_cast<std::size_t>(t.cols) * static_cast<std::size_t>(dtype_bytes(t.dtype)); }
}  // namespace

namespace {
std::size_t element_index(const Tile& t, int r, int c) {
    return t.column_major ? static_cast<std::size_t>(c) * t.rows + r : static_cast<std::size_t>(r) * t.cols + c;
}
}  // namespace

void copy_gm_to_tile(Tile& dst, const GmTensor& src, WorkScratch& scratch) {
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(src.dtype()));
    gm_before_read(src.allocation(), GmSpan::of(src), scratch);
    dst.pin.reset();
    dst.chain.reset();
    dst.column_major = src.layout() == Layout::DN;
    if (!dst.column_major) {
        for (int r = 0; r < dst.rows; ++r) std::memcpy(dst.data + r * row_bytes(dst), src.element_ptr(r, 0), row_bytes(dst));
        return;
    }
    // DN: each logical column is contiguous in GM; keep it contiguous in the tile.
    for (int c = 0; c < dst.cols; ++c)
        std::memcpy(dst.data + static_cast<std::size_t>(c) * dst.rows * esize, src.element_ptr(0, c), dst.rows * esize);
}

void copy_tile_to_gm(const GmTensor& dst, const Tile& src, WorkScratch& scratch) {
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(dst.dtype()));
    materialize(src);
    gm_before_write(dst.allocation(), GmSpan::of(dst), scratch);
    if (dst.dtype() != src.dtype) {  // cast on the way (FIX pipe)
        const std::size_t ssize = static_cast<std::size_t>(dtype_bytes(src.dtype));
        for (int r = 0; r < src.rows; ++r)
            for (int c = 0; c < src.cols; ++c)
                store_from_float(dst.element_ptr(r, c), dst.dtype(),
                                 load_as_float(src.data + element_index(src, r, c) * ssize, src.dtype));
        return;
    }
    if (dst.layout() == Layout::ND && !src.column_major) {
        for (int r = 0; r < src.rows; ++r) std::memcpy(dst.element_ptr(r, 0), src.data + r * row_bytes(src), row_bytes(src));
        return;
    }
    if (dst.layout() == Layout::DN && src.column_major) {
        for (int c = 0; c < src.cols; ++c)
            std::memcpy(dst.element_ptr(0, c), src.data + static_cast<std::size_t>(c) * src.rows * esize, src.rows * esize);
        return;
    }
    for (int r = 0; r < src.rows; ++r)
        for (int c = 0; c < src.cols; ++c)
            std::memcpy(dst.element_ptr(r, c), src.data + element_index(src, r, c) * esize, esize);
}

std::vector<std::byte> pack_tile(const Tile& src) {
    materialize(src);
    if (!src.column_major) return std::vector<std::byte>(src.data, src.data + src.bytes());
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(src.dtype));
    std::vector<std::byte> out(static_cast<std::size_t>(src.bytes()));
    for (int r = 0; r < src.rows; ++r)
        for (int c = 0; c < src.cols; ++c)
            std::memcpy(out.data() + (static_cast<std::size_t>(r) * src.cols + c) * esize,
                        src.data + element_index(src, r, c) * esize, esize);
    return out;
}

std::vector<std::byte> pack_tile_as(const Tile& src, DType dtype) {
    if (dtype == src.dtype) return pack_tile(src);
    materialize(src);
    const std::size_t ssize = static_cast<std::size_t>(dtype_bytes(src.dtype));
    const std::size_t dsize = static_cast<std::size_t>(dtype_bytes(dtype));
    std::vector<std::byte> out(static_cast<std::size_t>(src.rows) * static_cast<std::size_t>(src.cols) * dsize);
    for (int r = 0; r < src.rows; ++r)
        for (int c = 0; c < src.cols; ++c)
            store_from_float(out.data() + (static_cast<std::size_t>(r) * src.cols + c) * dsize, dtype,
                             load_as_float(src.data + element_index(src, r, c) * ssize, src.dtype));
    return out;
}

void copy_tile_region(Tile& dst, const Tile& src, int row, int col) {
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(src.dtype));
    materialize(src);
    dst.pin.reset();
    dst.chain.reset();
    dst.column_major = src.column_major;
    if (!src.column_major) {
        for (int r = 0; r < dst.rows; ++r) {
            std::memcpy(dst.data + r * row_bytes(dst),
                        src.data + ((static_cast<std::size_t>(row) + r) * src.cols + col) * esize, row_bytes(dst));
        }
        return;
    }
    for (int c = 0; c < dst.cols; ++c) {
        std::memcpy(dst.data + static_cast<std::size_t>(c) * dst.rows * esize,
                    src.data + ((static_cast<std::size_t>(col) + c) * src.rows + row) * esize, dst.rows * esize);
    }
}

}  // namespace tandem
