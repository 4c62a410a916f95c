#pragma once
// A fixed-size, zero-initialised byte buffer for GM allocations and other large host buffers.
// Unlike a value-initialised std::vector it does not write the zeros itself: the kernel hands
// out fresh pages it zeroes on first touch, so an allocation costs nothing until it is used, and
// each page is first touched by whichever thread uses it (in parallel) rather than all of them
// by the thread that allocates.
//
// Large buffers (kHugeBytes and up) are mapped on their own, 2 MiB aligned, with
// madvise(MADV_HUGEPAGE): where transparent huge pages are enabled ("always" or "madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled) the first touch of each 2 MiB takes one page
// fault instead of 512, which is most of what a functional run spends in the Linux kernel
// (the inputs, GM tensors and outputs are tens of MiB). Where they are not, the advice is
// ignored and the buffer is plain zeroed pages as before. Smaller buffers come from calloc.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace tandem {

class ZeroedBuffer {
public:
    static constexpr std::size_t kHugeBytes = std::size_t{2} << 20;

    ZeroedBuffer() = default;
    explicit ZeroedBuffer(std::size_t bytes) : size_(bytes) {
        if (bytes == 0) return;
        if (bytes >= kHugeBytes) {
            map_huge(bytes);
            return;
        }
        data_ = static_cast<std::byte*>(std::calloc(bytes, 1));
        if (data_ == nullptr) throw std::bad_alloc();
    }
    ~ZeroedBuffer() { release(); }
    ZeroedBuffer(ZeroedBuffer&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), mapped_(std::exchange(o.mapped_, nullptr)),
          mapped_bytes_(std::exchange(o.mapped_bytes_, 0)) {}
    ZeroedBuffer& operator=(ZeroedBuffer&& o) noexcept {
        if (this != &o) {
            release();
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            mapped_ = std::exchange(o.mapped_, nullptr);
            mapped_bytes_ = std::exchange(o.mapped_bytes_, 0);
        }
        return *this;
    }
    ZeroedBuffer(const ZeroedBuffer&) = delete;
    ZeroedBuffer& operator=(const ZeroedBuffer&) = delete;

    std::byte* data() { return data_; }
    const std::byte* data() const { return data_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    // One mapping of the size rounded up to 2 MiB plus 2 MiB of slack, so that the buffer can
    // start on a 2 MiB boundary (huge pages only back aligned 2 MiB ranges).
    void map_huge(std::size_t bytes) {
        const std::size_t rounded = (bytes + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
        mapped_bytes_ = rounded + kHugeBytes;
        void* p = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            mapped_bytes_ = 0;
            throw std::bad_alloc();
        }
        mapped_ = p;
        const std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(p) + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
        data_ = reinterpret_cast<std::byte*>(at);
        madvise(data_, rounded, MADV_HUGEPAGE);  // advice only: ignored where THP is off
    }
    void release() {
        if (mapped_ != nullptr) {
            munmap(mapped_, mapped_bytes_);
        } else {
            std::free(data_);
        }
        data_ = nullptr;
        mapped_ = nullptr;
        mapped_bytes_ = 0;
    }

    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    void* mapped_ = nullptr;         // the mapping of a large buffer (data_ lies inside it)
    std::size_t mapped_bytes_ = 0;
};

}  // namespace tandem
