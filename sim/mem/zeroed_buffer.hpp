#pragma once
// A fixed-size, zero-initialised byte buffer for GM allocations. Unlike a value-initialised
// std::vector it does not write the zeros itself: calloc hands large blocks out as fresh pages
// the kernel zeroes on first touch, so a device allocation costs nothing until it is used, and
// each page is first touched by whichever thread uses it (in parallel) rather than all of them
// by the thread that allocates.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace tandem {

class ZeroedBuffer {
public:
    ZeroedBuffer() = default;
    explicit ZeroedBuffer(std::size_t bytes) : size_(bytes) {
        if (bytes == 0) return;
        data_ = static_cast<std::byte*>(std::calloc(bytes, 1));
        if (data_ == nullptr) throw std::bad_alloc();
    }
    ~ZeroedBuffer() { std::free(data_); }
    ZeroedBuffer(ZeroedBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    ZeroedBuffer& operator=(ZeroedBuffer&& o) noexcept {
        if (this != &o) {
            std::free(data_);
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
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
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace tandem
