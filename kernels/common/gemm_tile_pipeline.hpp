#pragma once
// The K loop of one base_m x base_n output tile on the cube, with the buffer use both published
// Ascend kernels share (kernels/allgather_gemm/README.md "Compute kernel",
// kernels/matmul_all_reduce/ascend/README.md "Tiling"): A panels
// (base_m x panel_k) and B panels (panel_k x base_n) double-buffered in L1, one load per panel;
// each panel consumed in four K steps of panel_k / 4 (A step in L0A, B step in L0B, both
// double-buffered); one fp32 accumulator in L0C, stored through FIX after the last K step
// (L0C holds exactly one accumulator, so the store and the next tile's matmuls do not overlap).
// Pipes are ordered only by set_flag/wait_flag, so loads, extracts and matmuls overlap exactly
// as the flags allow. panel_k is base_n, as published, for 2-byte operands; for fp32 operands it
// is base_n / 2 and for int8 2 base_n (panel_k_for), so the L1 panels and the L0A/L0B steps hold
// the same bytes as fp16's and the output tile stays base_m x base_n (an fp32 fractal is 16 x 8,
// an int8 one 16 x 32). int8 operands accumulate in an int32 L0C (the same bytes as fp32), which
// the FIX pipe converts to fp32 on every store (TSTORE, sim/isa/isa.hpp): the ops' fp32 output.
//
//   GemmTilePipeline pipe(blk, base_m, base_n);
//   pipe.begin_tile();
//   for (each K panel) co_await pipe.accumulate(aPanel, bPanel);  // GM views, any rank's
//   co_await pipe.store(cTile);
//   ...
//   pipe.drain();  // before the block ends
//
// A bias (Ascend's bias table) is loaded before a tile's first panel with load_bias(): that
// tile's first K step is then a TMATMUL_BIAS, so the accumulator starts from the broadcast bias.
#include <vector>

#include "kernels/common/panel_k.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

class GemmTilePipeline {
public:
    // Operands of `dtype` (fp16 as published); the accumulator is fp32, or int32 for int8.
    GemmTilePipeline(BlockCtx& blk, int base_m, int base_n, DType dtype = DType::F16);

    int base_m() const { return base_m_; }
    int base_n() const { return base_n_; }
    int panel_k() const { return panel_k_; }

    // Start a new output tile (the next accumulate is a TMATMUL, or a TMATMUL_BIAS after
    // load_bias).
    void begin_tile() { first_step_ = true; }
    // Load the next tile's bias into L1: a 1 x base_n slice (one value per column) or a
    // base_m x 1 slice (one per row) of the bias vector. Call before begin_tile().
    Task load_bias(GmTensor biasSlice);
    // acc (+)= aPanel (base_m x panel_k) x bPanel (panel_k x base_n).
    Task accumulate(GmTensor aPanel, GmTensor bPanel);
    // Store the accumulator to `cTile` (base_m x base_n).
    Task store(GmTensor cTile);
    // Store the accumulator to each of `cTiles` in turn (FIX reads L0C once per target; a target
    // may be a peer's window: the fused ops' push of a finished tile), plainly or as atomic adds
    // (the reductions' way of summing partials at the target).
    Task store_each(std::vector<GmTensor> cTiles, AtomicType atomic = AtomicType::None);
    // Block the scalar until every store issued so far has landed (set_flag/wait_flag FIX -> S):
    // what a block does before it raises a flag saying the tile is there.
    void wait_stores();
    // Consume the pre-set flags so every set has its wait when the block ends.
    void drain();

private:
    BlockCtx& blk_;
    int base_m_;
    int base_n_;
    int panel_k_;
    Tile* aMatTile_[2];
    Tile* bMatTile_[2];
    Tile* aTile_[2];
    Tile* bTile_[2];
    Tile* cTile_;
    Tile* biasTile_ = nullptr;  // allocated by the first load_bias
    bool bias_loaded_ = false;
    int l1Buf_ = 0;
    int l0Buf_ = 0;
    bool first_step_ = true;
};

}  // namespace tandem::kernels
