#include "kernels/matmul_all_reduce/ascend/ar_tiling.hpp"

#include <algorithm>

#include "kernels/common/int_math.hpp"

namespace tandem::kernels {

AscendArTiling::AscendArTiling(const AscendArShape& s)
    : s_(s), m_tiles_(s.m / s.base_m), n_tiles_(s.n / s.base_n),
      tiles_per_block_(static_cast<int>(ceil_div(std::int64_t{m_tiles_} * n_tiles_, std::max(1, s.compute_blocks)))) {}

int AscendArTiling::block_first(int b) const { return std::min(tiles(), b * tiles_per_block_); }

int AscendArTiling::block_count(int b) const {
    const int first = block_first(b);
    return std::min(tiles(), first + tiles_per_block_) - first;
}

TilePos AscendArTiling::position(int l) const {
    const int mi = l / n_tiles_;
    const int col = l % n_tiles_;
    return TilePos{mi, mi % 2 == 0 ? col : n_tiles_ - 1 - col};
}

int AscendArTiling::grid_index(int l) const {
    const TilePos p = position(l);
    return p.mi * n_tiles_ + p.ni;
}

int AscendArTiling::owned_count(int rank) const {
    return rank < tiles() ? static_cast<int>(ceil_div(tiles() - rank, s_.ranks)) : 0;
}

std::int64_t AscendArTiling::ag_total_rows(int rank) const {
    return std::int64_t{owned_count(rank)} * (s_.ranks - 1) * s_.base_m;
}

std::int64_t AscendArTiling::ag_rows_per_block(int rank) const {
    return ceil_div(ag_total_rows(rank), std::max(1, s_.comm_blocks));
}

std::vector<AgSegment> AscendArTiling::ag_segments(int rank, int block) const {
    std::vector<AgSegment> segments;
    const std::int64_t total = ag_total_rows(rank);
    const std::int64_t per_block = ag_rows_per_block(rank);
    const std::int64_t begin = std::min(total, per_block * block);
    const std::int64_t end = std::min(total, begin + per_block);
    const int peers = s_.ranks - 1;
    for (std::int64_t row = begin; row < end;) {
        const std::int64_t flat = row / s_.base_m;       // (owned tile, destination) pair
        const std::int64_t pair_end = (flat + 1) * s_.base_m;
        const std::int64_t seg_end = std::min(end, pair_end);
        const int j = static_cast<int>(flat / peers);
        const int d = static_cast<int>(flat % peers);
        AgSegment seg;
        seg.tile = owned_tile(rank, j);
        seg.dest = d < rank ? d : d + 1;  // the destinations skip the rank itself
        seg.row0 = static_cast<int>(row - flat * s_.base_m);
        seg.rows = static_cast<int>(seg_end - row);
        segments.push_back(seg);
        row = seg_end;
    }
    return segments;
}

}  // namespace tandem::kernels
