#pragma once
// The work split of the newer version of Ascend's GEMM+AllReduce example (the "subtile-ready /
// AG-summary overlap" version; README.md in this folder), as pure arithmetic shared by its
// compute kernel, its comm kernel and the tests. T tiles of base_m x base_n, B compute blocks,
// Bc comm blocks, n ranks, subtiles of sub_m rows (spt = base_m / sub_m per tile):
//   * compute, balanced: base = T / B, rem = T % B; block b takes base + 1 tiles if b < rem, else
//     base, from b * (base + 1) (b < rem) or rem * (base + 1) + (b - rem) * base (11 x 18 + 10 x 6
//     at the default 258 tiles over 24 blocks); each ready queue still has ceil(T / B) slots;
//   * tile order: as the older version (ascend/ar_tiling.hpp), the boustrophedon places linear
//     tile l at row mi = l / nTiles, column ni = l % nTiles (even rows) or nTiles - 1 - l % nTiles
//     (odd rows). What the compute kernel enqueues, and what the comm kernel works with, is the
//     tile's row-major id mi * nTiles + ni (the "tile id" below), not l; tile id t sits at row
//     t / nTiles, column t % nTiles, and belongs to rank t % n;
//   * comm block b drains the ready queues b, b + Bc, b + 2 Bc, ...;
//   * owner-local subtile id of (tile t, stripe s): l = (t / n) * spt + s; its inverse on rank r:
//     t = r + (l / spt) * n, s = l % spt;
//   * the AG-summary counter a subtile's contributions bump: block Bc - 1 - l % Bc; comm block b
//     sends the owner-local ids Bc - 1 - b + k * Bc (the "reversed stripe"), so it listens to
//     its own summary counter;
//   * round p (0 .. n-2) of the send of subtile l from rank r goes to
//     (r + 1 + (l % (n - 1) + p) % (n - 1)) % n: every peer once, the first one rotated by l.
#include <vector>

#include "kernels/matmul_all_reduce/ascend/ar_tiling.hpp"

namespace tandem::kernels {

class SubtileArTiling {
public:
    // `s` padded (m to base_m, n to base_n); `sub_m` divides base_m (checked by the variant).
    SubtileArTiling(const AscendArShape& s, int sub_m);

    const AscendArShape& shape() const { return grid_.shape(); }
    int sub_m() const { return sub_m_; }
    int subtiles_per_tile() const { return shape().base_m / sub_m_; }
    int tiles() const { return grid_.tiles(); }
    int n_tiles() const { return grid_.n_tiles(); }

    // ---- compute (balanced split) ----
    int block_first(int b) const;
    int block_count(int b) const;
    int queue_capacity() const;  // ceil(T / B): every queue is sized for the old split's longest block
    // The row-major id of linear tile l's place: what the ready queues carry.
    int tile_id(int l) const { return grid_.grid_index(l); }
    int tile_row(int t) const { return t / n_tiles(); }
    int tile_col(int t) const { return t % n_tiles(); }
    int owner(int t) const { return t % shape().ranks; }

    // ---- reduce-scatter (comm block side) ----
    std::vector<int> queues_of(int comm_block) const;  // b, b + Bc, ... below B
    int expected_tiles(int comm_block) const;          // the sum of those queues' tile counts

    // ---- owner-local subtile ids (of tile ids) and the all-gather ----
    int local_id(int t, int stripe) const { return t / shape().ranks * subtiles_per_tile() + stripe; }
    int tile_of_local(int rank, int l) const { return rank + l / subtiles_per_tile() * shape().ranks; }
    int stripe_of_local(int l) const { return l % subtiles_per_tile(); }
    int owned_tiles(int rank) const { return grid_.owned_count(rank); }
    int owned_subtiles(int rank) const { return owned_tiles(rank) * subtiles_per_tile(); }
    int summary_block(int l) const { return shape().comm_blocks - 1 - l % shape().comm_blocks; }
    // Owner-local ids comm block b of `rank` sends, ascending.
    std::vector<int> ag_assigned(int rank, int comm_block) const;
    // The rank that round `round` (0 .. ranks-2) of the send of local subtile l from `rank` goes to.
    int ag_peer(int rank, int l, int round) const;

private:
    AscendArTiling grid_;
    int sub_m_;
    int base_;  // T / B
    int rem_;   // T % B
};

}  // namespace tandem::kernels
