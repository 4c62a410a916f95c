#pragma once
// Shapes and memory layout of the AllGather+GEMM: the tiling derived from (ranks, M, K, N, base
// tile), and what each rank's shared window holds: a 4 KB guard, room for the whole A (every
// rank writes its slice at the same offset everywhere), then the ready-queue flags.
#include <cstdint>

#include "kernels/allgather_gemm/ready_queue.hpp"

namespace tandem::kernels {

struct AgGemmShape {
    int ranks = 2;
    int m = 0;
    int k = 0;
    int n = 0;
    int base_m = 128;
    int base_n = 256;
    int chunk_tiles = 0;  // tiles per chunk; 0: the published rule (compute_chunk_size)
};

struct AgGemmTiling {
    explicit AgGemmTiling(const AgGemmShape& s);

    AgGemmShape shape;
    int rows_per_rank;     // M / ranks
    int local_row_groups;  // (M / ranks) / base_m
    int row_groups;        // M / base_m
    int k_tiles;           // K / base_n (transfer tiles along K)
    int n_tiles;           // N / base_n
    int tiles_per_source;  // local_row_groups * k_tiles
    int chunk_size;        // tiles per chunk
    int num_chunks;        // chunks per source
    int base_k;            // cube K step: base_n / 4

    // Tiles [first, last) of chunk c.
    int chunk_first_tile(int c) const { return c * chunk_size; }
    int chunk_end_tile(int c) const;
};

struct WindowLayout {
    static constexpr std::int64_t kGuardBytes = 4096;

    explicit WindowLayout(const AgGemmTiling& t);

    std::int64_t a_offset;      // byte offset of A (M x K fp16) in the window
    ChunkFlagMatrix flags;
    std::int64_t total_bytes;
};

}  // namespace tandem::kernels
