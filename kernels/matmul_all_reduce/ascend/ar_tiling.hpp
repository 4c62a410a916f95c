#pragma once
// The work split of Ascend's GEMM+AllReduce example (README.md in this folder), as pure arithmetic on
// the padded tile grid, shared by its compute kernel, its comm kernel and the tests:
//   * compute: block b takes the contiguous linear tiles [b * tpb, min((b+1) * tpb, tiles)),
//     tpb = ceil(tiles / blocks) (not balanced: 258 tiles over 24 blocks is 11 for blocks
//     0-22 and 5 for block 23; with few tiles the last blocks get none);
//   * tile order: linear index l -> row mi = l / nTiles, column ni = l % nTiles on even rows and
//     nTiles - 1 - l % nTiles on odd rows (a boustrophedon: consecutive tiles share B columns);
//   * a tile's id is its row-major index mi * nTiles + ni (what the ready queues carry); the
//     owner of tile id g is rank g % ranks (the reduce-scatter's target, the all-gather's source);
//   * all-gather: a rank's owned tiles x (ranks - 1) destinations x base_m rows, flattened and
//     split evenly over the comm blocks (rows_per_block = ceil(total_rows / blocks)); a block
//     walks its rows in segments that end at a tile's base_m-row boundary.
// The linear index orders a block's work; the row-major id names the tile everywhere else: the
// compute kernel enqueues `tile_idx = mi * nTiles + ni`, and the owner and the all-gather follow
// that id (the example's code, kernels/matmul_all_reduce/ascend/README.md).
#include <cstdint>
#include <vector>

namespace tandem::kernels {

struct AscendArShape {
    int ranks = 2;
    int m = 0;  // padded to base_m
    int k = 0;
    int n = 0;  // padded to base_n
    int base_m = 128;
    int base_n = 256;
    int compute_blocks = 24;
    int comm_blocks = 24;
};

struct TilePos {
    int mi = 0;
    int ni = 0;
};

// One all-gather segment: `rows` rows from row `row0` of owned tile `tile` (row-major id), sent
// to rank `dest`.
struct AgSegment {
    int tile = 0;
    int dest = 0;
    int row0 = 0;
    int rows = 0;
};

class AscendArTiling {
public:
    explicit AscendArTiling(const AscendArShape& s);

    const AscendArShape& shape() const { return s_; }
    int m_tiles() const { return m_tiles_; }
    int n_tiles() const { return n_tiles_; }
    int tiles() const { return m_tiles_ * n_tiles_; }
    int tiles_per_block() const { return tiles_per_block_; }

    // Compute block b's linear tiles: [block_first(b), block_first(b) + block_count(b)).
    int block_first(int b) const;
    int block_count(int b) const;
    // Where linear tile l sits (the boustrophedon swizzle), and its row-major id.
    TilePos position(int l) const;
    int grid_index(int l) const;
    // Where the tile of row-major id g sits.
    TilePos grid_position(int g) const { return TilePos{g / n_tiles_, g % n_tiles_}; }
    int owner(int g) const { return g % s_.ranks; }

    // Tiles `rank` owns, and its j-th (row-major id).
    int owned_count(int rank) const;
    int owned_tile(int rank, int j) const { return rank + j * s_.ranks; }

    // The all-gather of `rank`: its rows in total, per comm block, and block b's segments.
    std::int64_t ag_total_rows(int rank) const;
    std::int64_t ag_rows_per_block(int rank) const;
    std::vector<AgSegment> ag_segments(int rank, int block) const;

private:
    AscendArShape s_;
    int m_tiles_;
    int n_tiles_;
    int tiles_per_block_;
};

}  // namespace tandem::kernels
