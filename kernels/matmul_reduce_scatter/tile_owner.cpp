// The `tile_owner` variant (default): two streams.
//   GEMM (AIC): every tile's partial into the local stacked P (FIX, cast to the output dtype),
//     then pipe_barrier (the data complete) and TNOTIFY of ready[me][t] on the tile's owner
//     (release: an owner that sees the flag sees the data).
//   reduction (AIV), on each owner: per comm sub-tile of the tiles it owns, in the order the GEMM
//     makes them, wait for the tile's flag from every rank, pull the W partials (own and W-1
//     remote TLOADs from the peers' windows), sum in UB in rank order (every run the same bits;
//     fp16 and bf16 partials summed in fp32 and rounded once, as Iris sums them), store into the
//     output. The bias is in rank 0's partial (TMATMUL_BIAS), so the sum holds it
//     once. Traffic: each rank reads (W-1)/W x M x N partials, the reduce-scatter's payload.
// Why a second kernel rather than one MIX kernel: the partial an AIV sums comes from every rank,
// not only from the cube of its own cluster, so the hand-off goes through GM and a flag peers
// can see anyway; and the GEMM never waits on the reduction.
#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/collectives/ub_stage.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_reduce_scatter/mrs_run.hpp"
#include "kernels/matmul_reduce_scatter/variants.hpp"

namespace tandem::kernels::mrs {

namespace {

Task owner_reduce_kernel(BlockCtx& blk, MrsArgs a, collectives::CommGrid sub, bool skip_last_partial) {
    const int W = a.map.ranks;
    const int me = a.rank;
    const std::vector<int> owned = a.map.owned_tiles(me);
    const int subs = sub.tiles();
    const int items = static_cast<int>(owned.size()) * subs;
    collectives::UbStage ub(blk, sub.tile_rows, sub.tile_cols, a.out[0].dtype(),
                            collectives::fused_sum_dtype(a.out[0].dtype()));
    int waited_tile = -1;
    for (int item = blk.block_idx(); item < items; item += blk.block_num()) {
        const int t = owned[static_cast<std::size_t>(item / subs)];
        const int s = item % subs;
        if (t != waited_tile) {
            for (int p = 0; p < W; ++p) co_await TWAIT(blk, a.ready(me, p, t), CmpOp::GE, 1);
            waited_tile = t;
        }
        co_await ub.load(sub.tile(a.map.stacked_tile(a.partial[0], t), s));
        const int last = skip_last_partial ? W - 1 : W;  // fault: the last rank's partial left out
        for (int p = 1; p < last; ++p)
            co_await ub.add(sub.tile(a.map.stacked_tile(a.partial[static_cast<std::size_t>(p)], t), s));
        co_await ub.store(sub.tile(a.map.block_tile(a.out[static_cast<std::size_t>(me)], t), s));
        ub.finish_item();
    }
    ub.drain();
}

class TileOwnerRun final : public MrsRun {
public:
    using MrsRun::MrsRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const MrsArgs a = args(rank);
        const bool fault = params().fault == "skip_partial";
        const collectives::CommGrid sub =
            collectives::make_comm_grid(params().base_m, params().base_n,
                                        collectives::fused_sum_dtype(params().out_dtype), params().base_m);
        KernelLaunch reduce{"TileOwnerReduceKernel", CoreType::AIV, params().comm_blocks,
                            [a, sub, fault](BlockCtx& blk) { return owner_reduce_kernel(blk, a, sub, fault); }};
        return launched_together(reset_ready_flags(rank),
                                 {{kComputeStream, make_stacked_gemm_kernel(gemm(rank), a, true, params().compute_blocks)},
                                  {kCommStream, std::move(reduce)}});
    }
};

}  // namespace

VariantDesc tile_owner_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "tile_owner",
                                   "GEMM (AIC) stores partials locally and flags each tile on its owner; a reduction "
                                   "kernel (AIV) on each owner pulls the W partials of its tiles and sums them");
    v.constraints = "N a multiple of ranks x base-n (each rank's column block whole tiles); any M, K (padded); "
                    "fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (partials in the output dtype, "
                    "summed in fp32)";
    v.faults = {"skip_partial"};
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<TileOwnerRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mrs
