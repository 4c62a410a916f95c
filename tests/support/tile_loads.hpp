#pragma once
// Kernels that load GM tiles through UB, for tests of the chip's shared memory system
// (sim/mem/chip_memory.hpp): many AIV blocks of one stream loading beside a one-block probe on
// another, on an L2 narrow enough for them to saturate it.
#include <cstdint>

#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::test {

// The tiles: 128 x 128 fp32 (64 KiB), `kLoadTiles` per block.
inline constexpr int kLoadRows = 128;
inline constexpr int kLoadCols = 128;
inline constexpr int kLoadTiles = 32;
inline constexpr std::int64_t kLoadTileBytes = std::int64_t{kLoadRows} * kLoadCols * 4;

// The shipped profile with an L2 a tenth as fast, so that a kernel of many AIV blocks saturates it.
inline Profile narrow_l2_profile() {
    Profile p = b1_profile();
    p.chip.l2_gib_s = 400;
    return p;
}

// Block b loads its `kLoadTiles` tiles, one at a time, from rows (base_tile + b) of `buf`
// (which holds kLoadTiles tiles per row).
inline KernelFn tile_loader(GmAllocation& buf, int base_tile) {
    return [&buf, base_tile](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, kLoadRows, kLoadCols, DType::F32, "ub");
        for (int t = 0; t < kLoadTiles; ++t) {
            const std::int64_t off = (std::int64_t{base_tile + b.block_idx()} * kLoadTiles + t) * kLoadTileBytes;
            co_await TLOAD(ub, GmTensor(buf, off, kLoadRows, kLoadCols, kLoadCols, DType::F32));
            pipe_barrier(b, PIPE_ALL);
        }
    };
}

}  // namespace tandem::test
