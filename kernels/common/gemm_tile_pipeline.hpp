#pragma once
// The K loop of one base_m x base_n output tile on the cube, with the buffer use both published
// Ascend kernels share (SEED_KERNEL.md "K loop", GEMM_AR_KERNEL.md "Tiling"): A panels
// (base_m x panel_k) and B panels (panel_k x base_n) double-buffered in L1, one load per panel;
// each panel consumed in four K steps of panel_k / 4 (A step in L0A, B step in L0B, both
// double-buffered); one fp32 accumulator in L0C, stored through FIX after the last K step
// (L0C holds exactly one accumulator, so the store and the next tile's matmuls do not overlap).
// Pipes are ordered only by set_flag/wait_flag, so loads, extracts and matmuls overlap exactly
// as the flags allow. panel_k is base_n, as published.
//
//   GemmTilePipeline pipe(blk, base_m, base_n);
//   pipe.begin_tile();
//   for (each K panel) co_await pipe.accumulate(aPanel, bPanel);  // GM views, any rank's
//   co_await pipe.store(cTile);
//   ...
//   pipe.drain();  // before the block ends
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

class GemmTilePipeline {
public:
    // Operands of `dtype` (fp16 as published); the accumulator is fp32.
    GemmTilePipeline(BlockCtx& blk, int base_m, int base_n, DType dtype = DType::F16);

    int base_m() const { return base_m_; }
    int base_n() const { return base_n_; }
    int panel_k() const { return base_n_; }

    // Start a new output tile (the next accumulate is a TMATMUL).
    void begin_tile() { first_step_ = true; }
    // acc (+)= aPanel (base_m x panel_k) x bPanel (panel_k x base_n).
    Task accumulate(GmTensor aPanel, GmTensor bPanel);
    // Store the accumulator to `cTile` (base_m x base_n).
    Task store(GmTensor cTile);
    // Consume the pre-set flags so every set has its wait when the block ends.
    void drain();

private:
    BlockCtx& blk_;
    int base_m_;
    int base_n_;
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
