#pragma once
// The ready-queue metadata of the streaming AllGather: how a source's tiles are grouped into
// chunks, and where each chunk's flag and each source's summary counter live in the window.
// Mirrors the published ready_queue.hpp (ChunkFlagMatrix + summary counters).
#include <cstdint>
#include <string>

#include "sim/exec/signal.hpp"

namespace tandem::kernels {

// Chunk size rule of the published kernel: start at 4 tiles; if that gives more than 128
// chunks, use ceil(T/128) rounded up to a multiple of 4, capped at 64. (No lower bound on the
// number of chunks.)
int compute_chunk_size(int tiles_per_source);
int chunk_count(int tiles_per_source, int chunk_size);

// Flag region: a 64 B header, then int32 flags[ranks][stride] with stride = ceil(chunks/16)*16,
// then int32 summary[ranks].
struct ChunkFlagMatrix {
    static constexpr std::int64_t kHeaderBytes = 64;

    int ranks = 0;
    int chunks = 0;
    int stride = 0;
    std::int64_t region_offset = 0;  // byte offset of the region (its header) in the window

    ChunkFlagMatrix() = default;
    ChunkFlagMatrix(int ranks_, int chunks_, std::int64_t region_offset_);

    std::int64_t bytes() const { return kHeaderBytes + 4LL * ranks * stride + 4LL * ranks; }
    std::int64_t flag_offset(int src, int chunk) const { return region_offset + kHeaderBytes + 4LL * (std::int64_t{src} * stride + chunk); }
    std::int64_t summary_offset(int src) const { return region_offset + kHeaderBytes + 4LL * ranks * stride + 4LL * src; }

    // The signal words in the window of `rank` whose window starts at `window_base`.
    SignalAddr flag(int rank, std::int64_t window_base, int src, int chunk) const {
        return SignalAddr{rank, window_base + flag_offset(src, chunk)};
    }
    SignalAddr summary(int rank, std::int64_t window_base, int src) const {
        return SignalAddr{rank, window_base + summary_offset(src)};
    }

    // "flag[src=S][chunk=C]" or "summary[src=S]" for a byte offset in the window; empty if the
    // offset is neither (traces name signals with it).
    std::string name_of(std::int64_t window_offset) const;
};

}  // namespace tandem::kernels
