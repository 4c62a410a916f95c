#include "sim/mem/gm_tensor.hpp"

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem {

GmTensor::GmTensor(const GmAllocation& alloc, std::int64_t offset_bytes, int rows, int cols, std::int64_t ld,
                   DType dtype, Layout layout)
    : alloc_(&alloc), offset_bytes_(offset_bytes), rows_(rows), cols_(cols), ld_(ld), dtype_(dtype), layout_(layout) {
    const int inner = layout == Layout::ND ? cols : rows;
    if (rows <= 0 || cols <= 0 || ld < inner || offset_bytes < 0) {
        throw SimError(fmt::format("invalid GM tensor on rank {} in '{}': {}x{} with leading dimension {} at offset {}",
                                   alloc.rank, alloc.name, rows, cols, ld, offset_bytes));
    }
    check_bounds();
}

GmTensor GmTensor::sub(int r0, int c0, int nr, int nc) const {
    if (r0 < 0 || c0 < 0 || nr <= 0 || nc <= 0 || r0 + nr > rows_ || c0 + nc > cols_) {
        throw SimError(fmt::format("GM access out of bounds on rank {}: sub-tensor rows [{}, {}) cols [{}, {}) of {}",
                                   rank(), r0, r0 + nr, c0, c0 + nc, describe()));
    }
    GmTensor v = *this;
    v.offset_bytes_ = element_offset(r0, c0);
    v.rows_ = nr;
    v.cols_ = nc;
    return v;
}

std::byte* GmTensor::element_ptr(int r, int c) const {
    if (alloc_->data.empty()) return nullptr;
    // The allocation is owned by GlobalMemory, which hands out mutable access through views.
    auto* base = const_cast<std::byte*>(alloc_->data.data());
    return base + element_offset(r, c);
}

void GmTensor::check_bounds() const {
    const std::int64_t last = element_offset(rows_ - 1, cols_ - 1) + dtype_bytes(dtype_);
    if (last > alloc_->bytes) {
        throw SimError(fmt::format(
            "GM access out of bounds on rank {}: {} ends {} bytes past the end of allocation '{}' ({} bytes)",
            rank(), describe(), last - alloc_->bytes, alloc_->name, alloc_->bytes));
    }
}

std::string GmTensor::describe() const {
    return fmt::format("{} {}x{} {} tensor at '{}'+{:#x} (ld {})", layout_ == Layout::ND ? "ND" : "DN", rows_,
                       cols_, dtype_name(dtype_), alloc_->name, offset_bytes_, ld_);
}

}  // namespace tandem
