#include "sim/isa/tile_copy.hpp"

#include <cstdint>
#include <cstring>

namespace tandem {

namespace {
std::size_t row_bytes(const Tile& t) { return static_cast<std::size_t>(t.cols) * static_cast<std::size_t>(dtype_bytes(t.dtype)); }
}  // namespace

void copy_gm_to_tile(Tile& dst, const GmTensor& src) {
    const int esize = dtype_bytes(src.dtype());
    if (src.layout() == Layout::ND) {
        for (int r = 0; r < dst.rows; ++r) std::memcpy(dst.data + r * row_bytes(dst), src.element_ptr(r, 0), row_bytes(dst));
        return;
    }
    // DN: column c of the logical matrix is contiguous in GM; gather it into the row-major tile.
    if (esize == 2) {
        auto* out = reinterpret_cast<std::uint16_t*>(dst.data);
        for (int c = 0; c < dst.cols; ++c) {
            const auto* col = reinterpret_cast<const std::uint16_t*>(src.element_ptr(0, c));
            for (int r = 0; r < dst.rows; ++r) out[static_cast<std::size_t>(r) * dst.cols + c] = col[r];
        }
        return;
    }
    for (int c = 0; c < dst.cols; ++c) {
        const std::byte* col = src.element_ptr(0, c);
        for (int r = 0; r < dst.rows; ++r)
            std::memcpy(dst.data + (static_cast<std::size_t>(r) * dst.cols + c) * esize, col + static_cast<std::size_t>(r) * esize, esize);
    }
}

void copy_tile_to_gm(const GmTensor& dst, const Tile& src) {
    const int esize = dtype_bytes(dst.dtype());
    if (dst.layout() == Layout::ND) {
        for (int r = 0; r < src.rows; ++r) std::memcpy(dst.element_ptr(r, 0), src.data + r * row_bytes(src), row_bytes(src));
        return;
    }
    for (int c = 0; c < src.cols; ++c) {
        std::byte* col = dst.element_ptr(0, c);
        for (int r = 0; r < src.rows; ++r)
            std::memcpy(col + static_cast<std::size_t>(r) * esize, src.data + (static_cast<std::size_t>(r) * src.cols + c) * esize, esize);
    }
}

std::vector<std::byte> pack_tile(const Tile& src) {
    return std::vector<std::byte>(src.data, src.data + src.bytes());
}

void copy_tile_region(Tile& dst, const Tile& src, int row, int col) {
    const std::size_t esize = static_cast<std::size_t>(dtype_bytes(src.dtype));
    for (int r = 0; r < dst.rows; ++r) {
        std::memcpy(dst.data + r * row_bytes(dst), src.data + ((static_cast<std::size_t>(row) + r) * src.cols + col) * esize,
                    row_bytes(dst));
    }
}

}  // namespace tandem
