#pragma once
// The newer version of Ascend's published GEMM+AllReduce example (README.md in this folder),
// written against Tandem's tile ISA: the compute kernel on the AIC cores (GemmComputeKernel,
// balanced split) and one comm kernel on the AIV cores (GemmCommAllKernel: an interleaved
// subtile reduce-scatter / all-gather loop, no barrier), on two streams, handing tiles over
// through per-compute-block ready queues and subtiles through the signal matrix.
#include <cstdint>
#include <vector>

#include "kernels/common/spsc_ready_queue.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/signal_layout.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_tiling.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels {

// Deliberate bugs a test asks for, to prove verification or the sanitizer catches them.
enum class SubtileArFault {
    None,
    SkipLastKTile,     // the compute kernel leaves out the last K panel of every tile
    SkipSubtileAdd,    // comm block 0 drops the atomic add of the first subtile it stores (still publishes it)
    ReadyBeforeStore,  // every subtile is published (both TNOTIFYs) before its atomic store is issued
};

// What the kernels of one rank see (the published kernels' device arguments).
struct SubtileArArgs {
    SubtileArTiling tiling;
    SubtileSignalLayout signals;
    int my_rank = 0;
    GmTensor a;                               // A_i, M x K fp16 (ND), padded
    GmTensor b;                               // B, K x N fp16 (DN), padded
    GmTensor gemm_output;                     // this rank's fp16 tiles, M x N, local GM
    std::vector<GmTensor> reduced_output;     // every rank's M x N fp16 result, in its window
    std::vector<std::int64_t> signal_bases;   // every rank's signal matrix, in its window
    SpscQueueSet queues;                      // one ready queue per compute block, local GM
    std::int64_t queue_base = 0;              // address of this rank's queue allocation
    SubtileArFault fault = SubtileArFault::None;

    SubtileArArgs(const AscendArShape& s, int sub_m)
        : tiling(s, sub_m), signals(tiling.tiles(), tiling.subtiles_per_tile(), s.comm_blocks) {}

    SpscQueue queue(int compute_block) const { return queues.queue(my_rank, queue_base, compute_block); }
    // The tile of row-major id t of an M x N matrix, and its stripe s (sub_m rows).
    GmTensor tile_of(const GmTensor& matrix, int t) const;
    GmTensor subtile_of(const GmTensor& matrix, int t, int stripe) const;
    // `rank`'s signal words.
    SignalAddr subtile_ready(int rank, int l) const;
    SignalAddr ag_summary(int rank, int comm_block) const;
};

// GemmComputeKernel (AIC, `compute_blocks` blocks).
KernelLaunch make_subtile_compute_kernel(const SubtileArArgs& args);
// GemmCommAllKernel (AIV, `comm_blocks` blocks).
KernelLaunch make_subtile_comm_kernel(const SubtileArArgs& args);

}  // namespace tandem::kernels
