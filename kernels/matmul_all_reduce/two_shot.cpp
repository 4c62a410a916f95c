// The `two_shot` variant (Iris's matmul_all_reduce "two_shot"): a reduce-scatter to tile owners,
// then the owners broadcast. GEMM kernel (AIC): partials into the local P, each tile flagged on
// its owner (tile t belongs to rank t % W, so every rank owns tiles of every GEMM wave).
// Reduction kernel (AIV) on the owner: for each comm sub-tile of its tiles, in the order the GEMM
// makes them, wait for the tile's flag from every rank, pull the W partials, sum in rank order,
// store the sum locally and into every peer's output (MTE3 remote stores), then (after a
// pipe_barrier) add one to each peer's arrival counter; at the end every block waits until all
// sub-tiles owned by the peers have arrived. Traffic per rank: (W-1)/W x C of partials read and
// (W-1)/W x C of sums written, 2 (W-1)/W x C in all: the all-reduce's bus bytes.
#include "kernels/common/collectives/ub_stage.hpp"
#include "kernels/matmul_all_reduce/partials_run.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels::mar {

namespace {

Task two_shot_reduce_kernel(BlockCtx& blk, PartialsArgs a, bool skip_broadcast) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int subs = a.subs();
    std::vector<int> owned;
    for (int t = 0; t < a.layout.tiles; ++t)
        if (tile_owner(t, W) == me) owned.push_back(t);
    collectives::UbStage ub(blk, a.layout.sub.tile_rows, a.layout.sub.tile_cols, a.out[0].dtype());
    int waited_tile = -1;
    const int items = static_cast<int>(owned.size()) * subs;
    for (int item = blk.block_idx(); item < items; item += blk.block_num()) {
        const int t = owned[static_cast<std::size_t>(item / subs)];
        const int s = item % subs;
        if (t != waited_tile) {
            for (int p = 0; p < W; ++p) co_await TWAIT(blk, a.ready(me, p, t), CmpOp::GE, 1);
            waited_tile = t;
        }
        co_await ub.load(a.sub_tile(a.partial[0], t, s));
        for (int p = 1; p < W; ++p) co_await ub.add(a.sub_tile(a.partial[static_cast<std::size_t>(p)], t, s));
        co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(me)], t, s));
        for (int k = 1; k < W; ++k) {
            if (skip_broadcast && k == W - 1) continue;  // fault: one peer never gets the sum
            co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>((me + k) % W)], t, s));
        }
        ub.finish_item();
        pipe_barrier(blk, PIPE_ALL);  // the sums are at the peers before their counters move
        for (int k = 1; k < W; ++k) TNOTIFY(blk, a.counter((me + k) % W), 1, NotifyOp::AtomicAdd);
    }
    // Every sub-tile the peers own has arrived here.
    const int expected = (a.layout.tiles - static_cast<int>(owned.size())) * subs;
    co_await TWAIT(blk, a.counter(me), CmpOp::GE, expected);
    ub.drain();
}

class TwoShotRun final : public PartialsRun {
public:
    using PartialsRun::PartialsRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const PartialsArgs a = args(rank);
        const bool fault = params().fault == "skip_broadcast";
        KernelLaunch reduce{"TwoShotReduceBroadcastKernel", CoreType::AIV, params().comm_blocks,
                            [a, fault](BlockCtx& blk) { return two_shot_reduce_kernel(blk, a, fault); }};
        return ViewPlan{reset_flags(rank),
                        {ViewPhase{PhaseRole::Both,
                                   {},
                                   {{kComputeStream, make_partials_gemm_kernel(gemm(rank), a, Readers::Owner,
                                                                               params().compute_blocks)},
                                    {kCommStream, std::move(reduce)}}}}};
    }
};

}  // namespace

VariantDesc two_shot_variant() {
    VariantDesc v;
    v.name = "two_shot";
    v.doc = "GEMM (AIC) stores partials locally and flags each tile on its owner; the owner's reduction kernel "
            "(AIV) pulls the W partials, sums them and stores the sum into every rank's output";
    v.constraints = "any M, N, K (padded to base-m, base-n); fp16/bf16 in; fp32 or input-dtype out (partials and "
                    "sums in the output dtype)";
    v.dtypes = {DType::F16, DType::BF16};
    v.out_dtypes = {DType::F32, DType::F16, DType::BF16};
    v.takes_bias = true;
    v.output_in_window = true;
    v.faults = {"skip_broadcast"};
    v.validate = validate_common;
    v.padding = mar_padding;
    v.workspace_bytes = [](const OpParams& p) { return mar_workspace_bytes(p, partials_variant_bytes(p)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<TwoShotRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mar
