#pragma once
// A view of a matrix in some rank's global memory: what TLOAD reads, TSTORE and TPUT write.
// Layout ND is row-major; DN is column-major (the matrix stored transposed, as the seed keeps B).
// Every view is bounds-checked against its allocation when it is made.
#include <cstdint>
#include <string>

#include "sim/mem/dtype.hpp"
#include "sim/mem/global_memory.hpp"

namespace tandem {

enum class Layout : std::uint8_t { ND, DN };

class GmTensor {
public:
    GmTensor() = default;
    // A rows x cols matrix starting `offset_bytes` into `alloc`; `ld` is the leading dimension in
    // elements (row stride for ND, column stride for DN).
    GmTensor(const GmAllocation& alloc, std::int64_t offset_bytes, int rows, int cols, std::int64_t ld,
             DType dtype, Layout layout = Layout::ND);

    // The sub-matrix rows [r0, r0+nr) x cols [c0, c0+nc) of this view.
    GmTensor sub(int r0, int c0, int nr, int nc) const;

    int rank() const { return alloc_->rank; }
    const GmAllocation& allocation() const { return *alloc_; }
    std::int64_t offset_bytes() const { return offset_bytes_; }
    std::int64_t address() const { return alloc_->base + offset_bytes_; }
    int rows() const { return rows_; }
    int cols() const { return cols_; }
    std::int64_t ld() const { return ld_; }
    DType dtype() const { return dtype_; }
    Layout layout() const { return layout_; }
    std::int64_t bytes() const { return std::int64_t{rows_} * cols_ * dtype_bytes(dtype_); }
    bool valid() const { return alloc_ != nullptr; }
    // How many contiguous runs of bytes the view is in GM: one when its lines follow each other
    // (or it has one line), else one per line (a row of ND, a column of DN). A remote move sends
    // each run as its own burst (sim/MODEL.md "One core's remote traffic").
    std::int64_t contiguous_runs() const {
        const int lines = layout_ == Layout::ND ? rows_ : cols_;
        const int line = layout_ == Layout::ND ? cols_ : rows_;
        return lines <= 1 || ld_ == line ? 1 : lines;
    }
    // Do both views see the same elements of the same allocation the same way (origin, extent,
    // stride, element type, layout)? Compares the allocations' addresses only, without reading them.
    bool same_region(const GmTensor& o) const {
        return alloc_ == o.alloc_ && offset_bytes_ == o.offset_bytes_ && rows_ == o.rows_ && cols_ == o.cols_ &&
               ld_ == o.ld_ && dtype_ == o.dtype_ && layout_ == o.layout_;
    }

    // Byte offset within the allocation of element (r, c) of this view.
    std::int64_t element_offset(int r, int c) const {
        const std::int64_t idx = layout_ == Layout::ND ? std::int64_t{r} * ld_ + c : std::int64_t{c} * ld_ + r;
        return offset_bytes_ + idx * dtype_bytes(dtype_);
    }
    // Host pointer to element (r, c); null in timing-only mode.
    std::byte* element_ptr(int r, int c) const;

    std::string describe() const;

private:
    void check_bounds() const;

    const GmAllocation* alloc_ = nullptr;
    std::int64_t offset_bytes_ = 0;
    int rows_ = 0;
    int cols_ = 0;
    std::int64_t ld_ = 0;
    DType dtype_ = DType::F16;
    Layout layout_ = Layout::ND;
};

}  // namespace tandem
