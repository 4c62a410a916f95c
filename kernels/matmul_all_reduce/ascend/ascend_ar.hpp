#pragma once
// Ascend's published GEMM+AllReduce example (pto-isa kernels/manual/a2a3/gemm_ar, version of
// 2026-04-21; README.md in this folder), written against Tandem's tile ISA: a compute kernel on the
// AIC cores (GemmComputeKernel) and a comm kernel on the AIV cores (GemmCommAllKernel), on two
// streams, handing finished tiles over through per-block ready queues.
#include <vector>

#include "kernels/common/device_barrier.hpp"
#include "kernels/common/spsc_ready_queue.hpp"
#include "kernels/matmul_all_reduce/ascend/ar_tiling.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels {

// Deliberate bugs a test asks for, to prove verification catches them.
enum class AscendArFault {
    None,
    SkipLastKTile,  // the compute kernel leaves out the last K panel of every tile
    SkipPartial,    // comm block 0 drops the atomic add of the last tile it dequeues
};

// What the kernels of one rank see (the published kernels' device arguments).
struct AscendArArgs {
    AscendArTiling tiling;
    int my_rank = 0;
    GmTensor a;                            // A_i, M x K fp16 (ND), padded
    GmTensor b;                            // B, K x N fp16 (DN), padded
    GmTensor gemm_output;                  // this rank's fp16 tiles, M x N, local GM
    std::vector<GmTensor> reduced_output;  // every rank's M x N fp16 result, in its window
    SpscQueueSet queues;                   // one ready queue per compute block, local GM
    std::int64_t queue_base = 0;           // address of this rank's queue allocation
    DeviceBarrier barrier;
    AscendArFault fault = AscendArFault::None;

    explicit AscendArArgs(const AscendArShape& s) : tiling(s) {}
    SpscQueue queue(int block) const { return queues.queue(my_rank, queue_base, block); }
    // The tile of row-major id g of an M x N matrix.
    GmTensor tile_of(const GmTensor& matrix, int g) const;
};

// GemmComputeKernel (AIC, `compute_blocks` blocks).
KernelLaunch make_ascend_compute_kernel(const AscendArArgs& args);

// GemmComputeKernel of both versions of the example (compute_kernel.cpp): they differ only in
// how the tiles are split over the blocks. Block b computes the count[b] linear tiles from
// first[b] of the tiling's boustrophedon order, each stored into gemm_output and then announced
// (its row-major id) on the block's ready queue.
struct GemmComputeJob {
    AscendArTiling tiling;
    GmTensor a;
    GmTensor b;
    GmTensor gemm_output;
    SpscQueueSet queues;
    int my_rank = 0;
    std::int64_t queue_base = 0;
    std::vector<int> first;  // per compute block
    std::vector<int> count;
    bool skip_last_k_tile = false;  // fault: every tile misses its last K panel
};
KernelLaunch make_gemm_compute_kernel(const GemmComputeJob& job);
// GemmCommAllKernel (AIV, `comm_blocks` blocks).
KernelLaunch make_ascend_comm_kernel(const AscendArArgs& args);

}  // namespace tandem::kernels
