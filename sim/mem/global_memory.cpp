#include "sim/mem/global_memory.hpp"

#include <fmt/format.h>

#include "sim/mem/gm_deferred.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {
// Allocations are aligned like the device allocator does, and address 0..4 KiB stays unmapped so
// that a zero or small stray address is always an error.
constexpr std::int64_t kAlignBytes = 4096;
constexpr std::int64_t kFirstBase = 4096;

std::int64_t align_up(std::int64_t v) { return (v + kAlignBytes - 1) / kAlignBytes * kAlignBytes; }
}  // namespace

GlobalMemory::GlobalMemory(int rank, std::int64_t capacity_bytes, bool functional)
    : rank_(rank), capacity_bytes_(capacity_bytes), functional_(functional), next_base_(kFirstBase) {}

GmAllocation& GlobalMemory::allocate(const std::string& name, std::int64_t bytes, bool shared) {
    if (bytes < 0) throw SimError(fmt::format("rank {}: GM allocation '{}' of negative size {}", rank_, name, bytes));
    const std::int64_t rounded = align_up(bytes);
    if (used_bytes_ + rounded > capacity_bytes_) {
        throw SimError(fmt::format(
            "rank {}: GM allocation '{}' of {} bytes exceeds the chip's capacity: {} of {} bytes already in use",
            rank_, name, bytes, used_bytes_, capacity_bytes_));
    }
    GmAllocation& a = allocations_.emplace_back();
    a.rank = rank_;
    a.name = name;
    a.base = next_base_;
    a.bytes = bytes;
    a.shared = shared;
    if (functional_) {
        a.data = ZeroedBuffer(static_cast<std::size_t>(bytes));
        a.deferred = std::make_shared<GmDeferredState>();
    }
    next_base_ += rounded + kAlignBytes;  // one unmapped page between allocations as a guard
    used_bytes_ += rounded;
    return a;
}

void GlobalMemory::release(const GmAllocation& allocation) {
    for (GmAllocation& a : allocations_) {
        if (&a != &allocation) continue;
        if (a.released) throw SimError(fmt::format("rank {}: GM allocation '{}' released twice", rank_, a.name));
        a.released = true;
        a.data = ZeroedBuffer();
        a.deferred.reset();
        used_bytes_ -= align_up(a.bytes);
        return;
    }
    throw SimError(fmt::format("rank {}: release of GM allocation '{}' that is not this chip's", rank_, allocation.name));
}

const GmAllocation& GlobalMemory::find(std::int64_t address, std::int64_t bytes) const {
    for (const GmAllocation& a : allocations_) {
        if (address >= a.base && address < a.end()) {
            if (a.released) {
                throw SimError(fmt::format("GM access on rank {}: address {:#x} is in released allocation '{}'", rank_,
                                           address, a.name));
            }
            if (address + bytes > a.end()) {
                throw SimError(fmt::format(
                    "GM access out of bounds on rank {}: bytes [{:#x}, {:#x}) run past the end of allocation '{}' "
                    "[{:#x}, {:#x}) by {} bytes",
                    rank_, address, address + bytes, a.name, a.base, a.end(), address + bytes - a.end()));
            }
            return a;
        }
    }
    throw SimError(fmt::format("GM access out of bounds on rank {}: address {:#x} is in no allocation", rank_, address));
}

void GlobalMemory::check_signal_word(std::int64_t address) const {
    if (address % 4 != 0) {
        throw SimError(fmt::format("signal address {:#x} on rank {} is not 4-byte aligned", address, rank_));
    }
    find(address, 4);
}

std::string GlobalMemory::describe(std::int64_t address) const {
    const GmAllocation& a = find(address, 4);
    return fmt::format("rank {} '{}'+{:#x}", rank_, a.name, address - a.base);
}

}  // namespace tandem
