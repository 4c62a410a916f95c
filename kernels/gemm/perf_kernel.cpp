// GemmPerformance, as published (kernels/gemm/README.md "The kernel, step by step"): one C block
// per block, tiles i (rows) outer and j (columns) inner, K in 64-deep steps; every 4th step one
// A panel then one B panel are loaded into the free L1 slot (MTE2), each K step extracts its A and
// B slices into the free L0A/L0B slot (MTE1) and multiplies them into the single L0C accumulator
// (M); after a tile's last step the accumulator is stored through FIX while the cube waits.
//
// The flags are the published ones, event id by event id:
//   MTE1 -> MTE2, id = L1 slot:  the slot's panel has been extracted four times (slot free);
//   MTE2 -> MTE1, id 0 / id 1:   the A / the B panel has landed, whichever slot it went to;
//   MTE1 -> M,    id = L0 slot:  the slot's slices are extracted;
//   M -> MTE1,    id = L0 slot:  the cube has read the slot (slot free);
//   M -> FIX / FIX -> M, id 0:   the accumulator is complete / has been stored.
// Both token pools (MTE1 -> MTE2 and M -> MTE1) are pre-armed with one set per slot and drained
// at the end; there is no pipe_barrier.
//
// The fixed MTE2 -> MTE1 ids can be set twice before they are waited on (MTE2 runs a panel
// ahead of MTE1). Tandem's set_flag/wait_flag keep a FIFO of set times per (src, dst, id), each
// wait taking the oldest set: a counting semaphore, which is what the kernel needs (the n-th
// wait of id 0 is released by the n-th A panel). See the README for why this is the reading.
#include "kernels/gemm/perf_kernel.hpp"

#include <fmt/format.h>

#include "sim/isa/isa.hpp"

namespace tandem::kernels::gemm {

namespace {

constexpr int kBufferNum = 2;  // BUFFER_NUM: L1 and L0 slots
constexpr int kALandedEvent = 0;  // MTE2 -> MTE1: the A panel is in L1
constexpr int kBLandedEvent = 1;  // MTE2 -> MTE1: the B panel is in L1
constexpr int kAccEvent = 0;      // M <-> FIX

Task gemm_performance(BlockCtx& blk, PerfArgs args) {
    using T = PerfTiling;
    const PerfTiling& t = args.tiling;
    // InitGMOffsets: this block's A rows, B columns and C block.
    const int mIdx = t.m_index(blk.block_idx());
    const int nIdx = t.n_index(blk.block_idx());
    const GmTensor aBlock = args.a.sub(mIdx * t.single_core_m(), 0, t.single_core_m(), t.single_core_k());
    const GmTensor bBlock = args.b.sub(0, nIdx * t.single_core_n(), t.single_core_k(), t.single_core_n());
    const GmTensor cBlock = args.c.sub(mIdx * t.single_core_m(), nIdx * t.single_core_n(), t.single_core_m(), t.single_core_n());

    // The buffers at their published places: L1 2 x 64 KiB A panels then 2 x 128 KiB B panels;
    // two L0A and two L0B slots; one 128 KiB accumulator (all of L0C).
    Tile* aMatTile[kBufferNum];
    Tile* bMatTile[kBufferNum];
    Tile* aTile[kBufferNum];
    Tile* bTile[kBufferNum];
    for (int i = 0; i < kBufferNum; ++i) aMatTile[i] = &blk.alloc_tile(MemKind::L1, T::kBaseM, T::kPanelK, DType::F16, fmt::format("aMatTile[{}]", i));
    for (int i = 0; i < kBufferNum; ++i) bMatTile[i] = &blk.alloc_tile(MemKind::L1, T::kPanelK, T::kBaseN, DType::F16, fmt::format("bMatTile[{}]", i));
    for (int i = 0; i < kBufferNum; ++i) aTile[i] = &blk.alloc_tile(MemKind::L0A, T::kBaseM, T::kBaseK, DType::F16, fmt::format("aTile[{}]", i));
    for (int i = 0; i < kBufferNum; ++i) bTile[i] = &blk.alloc_tile(MemKind::L0B, T::kBaseK, T::kBaseN, DType::F16, fmt::format("bTile[{}]", i));
    Tile& cTile = blk.alloc_tile(MemKind::L0C, T::kBaseM, T::kBaseN, DType::F32, "cTile");

    // Prologue: every L1 and L0 slot starts free.
    for (int i = 0; i < kBufferNum; ++i) set_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
    for (int i = 0; i < kBufferNum; ++i) set_flag(blk, PIPE_M, PIPE_MTE1, i);

    int mte2DBFlag = 0;  // the L1 slot the next panel goes to (persists across tiles)
    int mte1DBFlag = 0;  // the L0 slot the next K step goes to (persists across tiles)
    for (int i = 0; i < t.m_loop(); ++i) {
        for (int j = 0; j < t.n_loop(); ++j) {
            for (int kIter = 0; kIter < t.k_loop(); ++kIter) {
                const int step = kIter % T::kStepK;
                if (step == 0) {
                    const int panel = kIter / T::kStepK;
                    wait_flag(blk, PIPE_MTE1, PIPE_MTE2, mte2DBFlag);
                    co_await TLOAD(*aMatTile[mte2DBFlag], aBlock.sub(i * T::kBaseM, panel * T::kPanelK, T::kBaseM, T::kPanelK));
                    set_flag(blk, PIPE_MTE2, PIPE_MTE1, kALandedEvent);
                    co_await TLOAD(*bMatTile[mte2DBFlag], bBlock.sub(panel * T::kPanelK, j * T::kBaseN, T::kPanelK, T::kBaseN));
                    set_flag(blk, PIPE_MTE2, PIPE_MTE1, kBLandedEvent);
                    mte2DBFlag ^= 1;
                }
                const int cur = 1 - mte2DBFlag;  // the slot holding this step's panel
                wait_flag(blk, PIPE_M, PIPE_MTE1, mte1DBFlag);
                if (step == 0) wait_flag(blk, PIPE_MTE2, PIPE_MTE1, kALandedEvent);
                TEXTRACT(*aTile[mte1DBFlag], *aMatTile[cur], 0, step * T::kBaseK);
                if (step == 0) wait_flag(blk, PIPE_MTE2, PIPE_MTE1, kBLandedEvent);  // A may go while B still loads
                TEXTRACT(*bTile[mte1DBFlag], *bMatTile[cur], step * T::kBaseK, 0);
                if (step == T::kStepK - 1) set_flag(blk, PIPE_MTE1, PIPE_MTE2, cur);  // after the 4th extract
                set_flag(blk, PIPE_MTE1, PIPE_M, mte1DBFlag);
                wait_flag(blk, PIPE_MTE1, PIPE_M, mte1DBFlag);
                const bool skipped = args.fault == PerfFault::SkipLastKStep && kIter == t.k_loop() - 1;
                if (kIter == 0) {
                    TMATMUL(cTile, *aTile[mte1DBFlag], *bTile[mte1DBFlag]);
                } else if (!skipped) {
                    TMATMUL_ACC(cTile, *aTile[mte1DBFlag], *bTile[mte1DBFlag]);
                }
                set_flag(blk, PIPE_M, PIPE_MTE1, mte1DBFlag);
                mte1DBFlag ^= 1;
            }
            // The single accumulator: FIX waits for the last matmul, the cube for the store.
            set_flag(blk, PIPE_M, PIPE_FIX, kAccEvent);
            wait_flag(blk, PIPE_M, PIPE_FIX, kAccEvent);
            co_await TSTORE(cBlock.sub(i * T::kBaseM, j * T::kBaseN, T::kBaseM, T::kBaseN), cTile);
            set_flag(blk, PIPE_FIX, PIPE_M, kAccEvent);
            wait_flag(blk, PIPE_FIX, PIPE_M, kAccEvent);
        }
    }
    // Epilogue: drain both token pools.
    for (int i = 0; i < kBufferNum; ++i) wait_flag(blk, PIPE_M, PIPE_MTE1, i);
    for (int i = 0; i < kBufferNum; ++i) wait_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
}

}  // namespace

KernelLaunch make_gemm_performance_kernel(const PerfArgs& args) {
    return KernelLaunch{"GemmPerformance", CoreType::AIC, PerfTiling::kBlocks,
                        [args](BlockCtx& blk) { return gemm_performance(blk, args); }};
}

}  // namespace tandem::kernels::gemm
