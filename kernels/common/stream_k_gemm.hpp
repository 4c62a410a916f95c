#pragma once
// A GEMM kernel under a stream_k or hybrid schedule (gemm_schedule.hpp), for every op's GEMM part:
// the op says where a finished tile goes (TileSink), this piece computes the segments and does
// the fix-ups of split tiles.
//
// Where the fix-up add runs, and why: on Ascend the cube cannot load an accumulator: L0C is
// written by the cube (TMATMUL*, or from the bias table) and read by FIX; nothing moves a
// matrix from GM into L0C. Adding a partial through the cube (TMATMUL_ACC with an identity
// operand) would need the fp32 partial in fp16/bf16 in L1: it loses precision. So, as
// CATLASS's Stream-K GEMM does, the partial sums are added by the vector cores in UB. The kernel
// is a MIX kernel (a cluster: one AIC, two AIVs):
//   AIC (block b): its segments in order; a whole tile goes straight from L0C to the sink
//     (FIX), as data-parallel; a segment of a split tile stores its fp32 partial into its slot
//     of the partials buffer (FIX), waits for the store (FIX -> S: release) and sets the slot's
//     flag (TNOTIFY). The AIC never waits for another block.
//   AIV (the cluster's two, alternately): for each split tile whose last K segment is block b's,
//     waits for each of the tile's partial flags (the fix-up waits: their own TWAIT slices in the
//     trace, each with a flow from the partial's flag), sums the slots in K order in UB (fp32,
//     TADD; so the bits never depend on timing), casts to the output dtype (TCVT) and stores the
//     tile to the sink (MTE3, plain or AtomicAdd, local or a peer's window), then raises the
//     sink's flags. So a split tile's communication starts when its fix-up is done.
// Every block's cluster must be resident at once (an AIV waits for AICs of other blocks): the
// ops refuse more blocks than clusters.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/common/gemm_schedule.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// Where a finished tile goes: each of targets(t) in turn (plain or atomic adds), then, once those
// stores have landed, each of notify(t) set to 1 (may be null: no flag).
struct TileSink {
    std::function<std::vector<GmTensor>(int t)> targets;
    AtomicType atomic = AtomicType::None;
    std::function<std::vector<SignalAddr>(int t)> notify;
};

struct StreamKGemm {
    GemmGrid grid;
    GemmSchedule schedule;
    GmTensor bias{};  // the whole bias vector (invalid: no bias on this rank)
    BiasKind bias_kind = BiasKind::None;
    int bias_col0 = 0;  // global column of the grid's first column (a column block's offset)
    DType out_dtype = DType::F32;
    GmTensor partials{};        // partial_slots x base_m rows x base_n, fp32, local
    SignalAddr counters{};      // one flag per partial slot on this rank: that partial is stored
    bool skip_partial = false;  // fault: the fix-up leaves out a split tile's last partial
    bool skip_last_k_panel = false;  // fault: a tile's last K panel is not computed

    GmTensor slot(int s) const { return partials.sub(s * grid.base_m, 0, grid.base_m, grid.base_n); }
    SignalAddr counter(int slot) const { return SignalAddr{counters.rank, counters.address + 4 * std::int64_t{slot}}; }
};

// The workspace a stream-K GEMM needs on each chip: the partials buffer, then the counters.
struct StreamKLayout {
    std::int64_t partials_offset = 0;
    std::int64_t counters_offset = 0;
    std::int64_t bytes = 0;
    int slots = 0;
    int tiles = 0;  // (one flag per slot follows the partials)
};
StreamKLayout stream_k_layout(const GemmSchedule& s, int base_m, int base_n);

// One cluster's part (AIC: segments; AIV: fix-ups), block blk.block_idx() of the schedule: for a
// MIX kernel whose first clusters are the GEMM's (matmul_all_scatter's specialized).
Task stream_k_gemm_cluster(BlockCtx& blk, StreamKGemm g, TileSink sink);

// The MIX kernel (`blocks` clusters = the schedule's blocks).
KernelLaunch make_stream_k_gemm_kernel(const std::string& name, const StreamKGemm& g, const TileSink& sink);

// The host's reset before a view: every counter to 0.
void reset_stream_k_counters(HostContext& host, const StreamKGemm& g);

}  // namespace tandem::kernels

namespace tandem::kernels {
// The check every op offering stream_k/hybrid makes: its GEMM kernel's clusters all resident
// (--compute-blocks <= the profile's clusters), as the fix-ups wait on other blocks.
void check_stream_k_blocks(const OpParams& p, const BufferLimits& lim);
}  // namespace tandem::kernels
