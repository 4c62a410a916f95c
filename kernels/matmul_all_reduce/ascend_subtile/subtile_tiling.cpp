#include "kernels/matmul_all_reduce/ascend_subtile/subtile_tiling.hpp"

#include <algorithm>

#include "sim/sim_error.hpp"

namespace tandem::kernels {

SubtileArTiling::SubtileArTiling(const AscendArShape& s, int sub_m)
    : grid_(s), sub_m_(sub_m), base_(grid_.tiles() / std::max(1, s.compute_blocks)),
      rem_(grid_.tiles() % std::max(1, s.compute_blocks)) {}

int SubtileArTiling::block_first(int b) const {
    return b < rem_ ? b * (base_ + 1) : rem_ * (base_ + 1) + (b - rem_) * base_;
}

int SubtileArTiling::block_count(int b) const { return b < rem_ ? base_ + 1 : base_; }

int SubtileArTiling::queue_capacity() const { return base_ + (rem_ > 0 ? 1 : 0); }

std::vector<int> SubtileArTiling::queues_of(int comm_block) const {
    std::vector<int> queues;
    for (int q = comm_block; q < shape().compute_blocks; q += shape().comm_blocks) queues.push_back(q);
    return queues;
}

int SubtileArTiling::expected_tiles(int comm_block) const {
    int tiles = 0;
    for (int q : queues_of(comm_block)) tiles += block_count(q);
    return tiles;
}

std::vector<int> SubtileArTiling::ag_assigned(int rank, int comm_block) const {
    std::vector<int> ids;
    const int bc = shape().comm_blocks;
    for (int l = bc - 1 - comm_block; l < owned_subtiles(rank); l += bc) ids.push_back(l);
    return ids;
}

int SubtileArTiling::ag_peer(int rank, int l, int round) const {
    const int n = shape().ranks;
    if (n < 2 || round < 0 || round > n - 2) {
        throw SimError("ascend_subtile all-gather: round " + std::to_string(round) + " of " + std::to_string(n) +
                       " ranks names no peer");
    }
    return (rank + 1 + (l % (n - 1) + round) % (n - 1)) % n;
}

}  // namespace tandem::kernels
