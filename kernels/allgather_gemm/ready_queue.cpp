#include "kernels/allgather_gemm/ready_queue.hpp"

#include <algorithm>

#include "kernels/common/int_math.hpp"

namespace tandem::kernels {

namespace {
constexpr int kBaseChunkTiles = 4;     // published starting chunk size
constexpr int kMaxChunksPerSource = 128;
constexpr int kMaxChunkTiles = 64;
constexpr int kFlagRowAlign = 16;      // flags rows padded to 16 ints (64 B cache line)
}  // namespace

int compute_chunk_size(int tiles_per_source) {
    int size = kBaseChunkTiles;
    if (ceil_div(tiles_per_source, size) > kMaxChunksPerSource) {
        size = ceil_div(tiles_per_source, kMaxChunksPerSource);
        size = round_up(size, kBaseChunkTiles);
        size = std::min(size, kMaxChunkTiles);
    }
    return size;
}

int chunk_count(int tiles_per_source, int chunk_size) { return ceil_div(tiles_per_source, chunk_size); }

std::string ChunkFlagMatrix::name_of(std::int64_t window_offset) const {
    const std::int64_t flags_begin = region_offset + kHeaderBytes;
    const std::int64_t word = (window_offset - flags_begin) / 4;
    if (window_offset < flags_begin || (window_offset - flags_begin) % 4 != 0) return {};
    if (word < std::int64_t{ranks} * stride) {
        const std::int64_t src = word / stride;
        const std::int64_t chunk = word % stride;
        return chunk < chunks ? "flag[src=" + std::to_string(src) + "][chunk=" + std::to_string(chunk) + "]" : std::string{};
    }
    const std::int64_t src = word - std::int64_t{ranks} * stride;
    return src < ranks ? "summary[src=" + std::to_string(src) + "]" : std::string{};
}

ChunkFlagMatrix::ChunkFlagMatrix(int ranks_, int chunks_, std::int64_t region_offset_)
    : ranks(ranks_), chunks(chunks_), stride(round_up(chunks_, kFlagRowAlign)), region_offset(region_offset_) {}

}  // namespace tandem::kernels
