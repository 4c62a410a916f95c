#include "kernels/common/gemm_tile_pipeline.hpp"

#include <fmt/format.h>

namespace tandem::kernels {

namespace {
// Event ids: buffers 0/1 use ids 0/1 on each pipe pair; the accumulator uses id 0 of FIX<->M.
constexpr int kAccEvent = 0;
// M -> MTE2: the cube has read the bias tile, which may then be reloaded.
constexpr int kBiasEvent = 0;
constexpr int kStepsPerPanel = 4;  // the cube's K step is panel_k / 4
}  // namespace

GemmTilePipeline::GemmTilePipeline(BlockCtx& blk, int base_m, int base_n, DType dtype)
    : blk_(blk), base_m_(base_m), base_n_(base_n), panel_k_(panel_k_for(base_n, dtype)) {
    const int baseK = panel_k_ / kStepsPerPanel;
    for (int i = 0; i < 2; ++i) {
        aMatTile_[i] = &blk.alloc_tile(MemKind::L1, base_m, panel_k_, dtype, fmt::format("aMatTile[{}]", i));
        bMatTile_[i] = &blk.alloc_tile(MemKind::L1, panel_k_, base_n, dtype, fmt::format("bMatTile[{}]", i));
        aTile_[i] = &blk.alloc_tile(MemKind::L0A, base_m, baseK, dtype, fmt::format("aTile[{}]", i));
        bTile_[i] = &blk.alloc_tile(MemKind::L0B, baseK, base_n, dtype, fmt::format("bTile[{}]", i));
    }
    cTile_ = &blk.alloc_tile(MemKind::L0C, base_m, base_n, accumulator_dtype(dtype), "cTile");
    // Every buffer starts free.
    for (int i = 0; i < 2; ++i) {
        set_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
        set_flag(blk, PIPE_M, PIPE_MTE1, i);
    }
    set_flag(blk, PIPE_FIX, PIPE_M, kAccEvent);
}

Task GemmTilePipeline::load_bias(GmTensor biasSlice) {
    if (biasTile_ == nullptr) {
        biasTile_ = &blk_.alloc_tile(MemKind::L1, biasSlice.rows(), biasSlice.cols(), biasSlice.dtype(), "biasTile");
        set_flag(blk_, PIPE_M, PIPE_MTE2, kBiasEvent);
    }
    wait_flag(blk_, PIPE_M, PIPE_MTE2, kBiasEvent);  // the previous TMATMUL_BIAS has read it
    co_await TLOAD(*biasTile_, biasSlice);
    bias_loaded_ = true;
}

Task GemmTilePipeline::accumulate(GmTensor aPanel, GmTensor bPanel) {
    const int baseK = panel_k_ / kStepsPerPanel;
    const int l1 = l1Buf_;
    l1Buf_ ^= 1;
    wait_flag(blk_, PIPE_MTE1, PIPE_MTE2, l1);  // L1 buffer no longer read by TEXTRACT
    co_await TLOAD(*aMatTile_[l1], aPanel);
    co_await TLOAD(*bMatTile_[l1], bPanel);
    set_flag(blk_, PIPE_MTE2, PIPE_MTE1, l1);
    wait_flag(blk_, PIPE_MTE2, PIPE_MTE1, l1);
    for (int step = 0; step < kStepsPerPanel; ++step) {
        const int l0 = l0Buf_;
        l0Buf_ ^= 1;
        wait_flag(blk_, PIPE_M, PIPE_MTE1, l0);  // L0 buffer no longer read by the cube
        TEXTRACT(*aTile_[l0], *aMatTile_[l1], 0, step * baseK);
        TEXTRACT(*bTile_[l0], *bMatTile_[l1], step * baseK, 0);
        set_flag(blk_, PIPE_MTE1, PIPE_M, l0);
        wait_flag(blk_, PIPE_MTE1, PIPE_M, l0);
        if (first_step_) {
            wait_flag(blk_, PIPE_FIX, PIPE_M, kAccEvent);  // accumulator stored out
            if (bias_loaded_) {
                // The bias reached L1 before this panel (MTE2 in order), so before the extract
                // this step waited for.
                TMATMUL_BIAS(*cTile_, *aTile_[l0], *bTile_[l0], *biasTile_);
                set_flag(blk_, PIPE_M, PIPE_MTE2, kBiasEvent);
                bias_loaded_ = false;
            } else {
                TMATMUL(*cTile_, *aTile_[l0], *bTile_[l0]);
            }
            first_step_ = false;
        } else {
            TMATMUL_ACC(*cTile_, *aTile_[l0], *bTile_[l0]);
        }
        set_flag(blk_, PIPE_M, PIPE_MTE1, l0);
    }
    set_flag(blk_, PIPE_MTE1, PIPE_MTE2, l1);
}

Task GemmTilePipeline::store(GmTensor cTile) {
    set_flag(blk_, PIPE_M, PIPE_FIX, kAccEvent);
    wait_flag(blk_, PIPE_M, PIPE_FIX, kAccEvent);
    co_await TSTORE(cTile, *cTile_);
    set_flag(blk_, PIPE_FIX, PIPE_M, kAccEvent);
}

Task GemmTilePipeline::store_each(std::vector<GmTensor> cTiles, AtomicType atomic) {
    set_flag(blk_, PIPE_M, PIPE_FIX, kAccEvent);
    wait_flag(blk_, PIPE_M, PIPE_FIX, kAccEvent);
    for (const GmTensor& cTile : cTiles) co_await TSTORE(cTile, *cTile_, atomic);
    set_flag(blk_, PIPE_FIX, PIPE_M, kAccEvent);
}

void GemmTilePipeline::wait_stores() {
    set_flag(blk_, PIPE_FIX, PIPE_S, kAccEvent);
    wait_flag(blk_, PIPE_FIX, PIPE_S, kAccEvent);
}

void GemmTilePipeline::drain() {
    for (int i = 0; i < 2; ++i) {
        wait_flag(blk_, PIPE_MTE1, PIPE_MTE2, i);
        wait_flag(blk_, PIPE_M, PIPE_MTE1, i);
    }
    wait_flag(blk_, PIPE_FIX, PIPE_M, kAccEvent);
    if (biasTile_ != nullptr) wait_flag(blk_, PIPE_M, PIPE_MTE2, kBiasEvent);
}

}  // namespace tandem::kernels
