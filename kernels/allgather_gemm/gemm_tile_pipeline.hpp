#pragma once
// The compute kernel's K loop for one 128 x 256 output tile, with the published kernel's buffer
// use: A panels (base_m x base_n) and B panels (base_n x base_n) double-buffered in L1, loaded
// every fourth K step; A (base_m x base_k) and B (base_k x base_n) double-buffered in L0A/L0B;
// one fp32 accumulator in L0C, stored through FIX after the last K step. Pipes are ordered only
// by set_flag/wait_flag, so loads, extracts and matmuls overlap exactly as the flags allow.
#include "kernels/allgather_gemm/allgather_gemm.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

class GemmTilePipeline {
public:
    GemmTilePipeline(BlockCtx& blk, const AgGemmArgs& args);

    // Start a new output tile (the next accumulate is a TMATMUL).
    void begin_tile() { first_step_ = true; }
    // Accumulate A[row0 : row0+base_m, kt*base_n : +base_n] x B[kt*base_n : +base_n, ni*base_n : +base_n].
    Task accumulate_k_tile(int row0, int kt, int ni);
    // Store the accumulator to C[row0 : +base_m, ni*base_n : +base_n].
    Task store_tile(int row0, int ni);
    // Consume the pre-set flags so every set has its wait when the block ends.
    void drain();

private:
    BlockCtx& blk_;
    const AgGemmArgs& args_;
    GmTensor aGlobal_;
    GmTensor bGlobal_;
    GmTensor cGlobal_;
    Tile* aMatTile_[2];
    Tile* bMatTile_[2];
    Tile* aTile_[2];
    Tile* bTile_[2];
    Tile* cTile_;
    int l1Buf_ = 0;
    int l0Buf_ = 0;
    bool first_step_ = true;
};

}  // namespace tandem::kernels
