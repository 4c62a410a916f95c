#pragma once
// The shapes of one rank's tensors, from the op's sharding (kernels/op_desc.hpp) and the run's
// M, K, N and ranks: what the host allocates, generates, checks memory for and verifies.
#include "kernels/op_desc.hpp"

namespace tandem::host {

// The shapes of a rank's tensors (logical, before any padding).
struct ShardShapes {
    int k_total = 0;   // K of the global product (ranks * k when k_per_rank)
    int a_rows = 0;    // A_r
    int a_cols = 0;
    int b_rows = 0;    // B_r stored transposed: N_r x K_r
    int b_cols = 0;
    int out_rows = 0;  // the rank's output
    int out_cols = 0;
    int bias_len = 0;  // 0 without bias
};

ShardShapes shard_shapes(const kernels::Sharding& s, const kernels::OpParams& p);

}  // namespace tandem::host
