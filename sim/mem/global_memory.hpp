#pragma once
// Global memory (HBM) of one chip: capacity-checked allocations in a flat address space, and
// bounds-checked access. In functional mode each allocation owns its bytes; in timing-only mode
// only the bookkeeping exists (no buffers), so huge shapes cost no host memory.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "sim/mem/zeroed_buffer.hpp"

namespace tandem {

struct GmDeferredState;  // sim/mem/gm_deferred.hpp

struct GmAllocation {
    int rank = 0;
    std::string name;
    std::int64_t base = 0;   // device address of the first byte
    std::int64_t bytes = 0;
    bool shared = false;  // part of the rank's peer window: peers may read and write it
    bool released = false;  // GlobalMemory::release: no access allowed any more
    ZeroedBuffer data;  // empty in timing-only mode
    // Deferred loads and stores on this allocation (functional mode); see gm_deferred.hpp.
    std::shared_ptr<GmDeferredState> deferred;

    bool functional() const { return !data.empty() || bytes == 0; }
    std::int64_t end() const { return base + bytes; }
};

class GlobalMemory {
public:
    GlobalMemory(int rank, std::int64_t capacity_bytes, bool functional);

    // Throws SimError when the chip's capacity would be exceeded.
    GmAllocation& allocate(const std::string& name, std::int64_t bytes, bool shared = false);

    // Gives an allocation's bytes back (its host buffer in functional mode, its share of the
    // capacity). Its address range is never handed out again, so a stale address stays an error
    // ("in a released allocation") instead of silently reaching newer data. Callers make sure no
    // kernel can touch it any more (the API does this with Runtime::wait_until_parked).
    void release(const GmAllocation& allocation);

    // The allocation holding [address, address + bytes); throws SimError when the range is not
    // inside one allocation.
    const GmAllocation& find(std::int64_t address, std::int64_t bytes) const;

    // Signal words: throws SimError unless [address, address + 4) is a 4-byte-aligned word inside
    // an allocation of this chip.
    void check_signal_word(std::int64_t address) const;
    // "rank 1 'flags'+0x40": the allocation holding the word at `address` (checked like find()).
    std::string describe(std::int64_t address) const;

    // Allocations in the order they were made (released ones included).
    std::size_t allocation_count() const { return allocations_.size(); }
    const GmAllocation& allocation_at(std::size_t index) const { return allocations_.at(index); }

    int rank() const { return rank_; }
    bool functional() const { return functional_; }
    std::int64_t used_bytes() const { return used_bytes_; }
    std::int64_t capacity_bytes() const { return capacity_bytes_; }

private:
    int rank_;
    std::int64_t capacity_bytes_;
    bool functional_;
    std::int64_t used_bytes_ = 0;
    std::int64_t next_base_;
    std::deque<GmAllocation> allocations_;  // deque: references stay valid as it grows
};

}  // namespace tandem
