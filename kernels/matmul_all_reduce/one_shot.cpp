// The `one_shot` variant (Iris's matmul_all_reduce "one_shot"): every rank reduces every tile
// itself. GEMM kernel (AIC): partials into the local P, each tile flagged on every rank
// (partials_run.hpp). Reduction kernel (AIV): for each comm sub-tile, in the order the GEMM makes
// them, wait for the tile's flag from every rank, pull the W partials (own and W-1 remote loads),
// sum in rank order, store into the local output. Traffic: each rank reads (W-1) x C.
#include "kernels/common/collectives/ub_stage.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_reduce/partials_run.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels::mar {

namespace {

Task one_shot_reduce_kernel(BlockCtx& blk, PartialsArgs a, bool skip_last_partial) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int subs = a.subs();
    collectives::UbStage ub(blk, a.layout.sub.tile_rows, a.layout.sub.tile_cols, a.out[0].dtype(),
                            collectives::fused_sum_dtype(a.out[0].dtype()));
    int waited_tile = -1;
    for (int item = blk.block_idx(); item < a.layout.tiles * subs; item += blk.block_num()) {
        const int t = item / subs;
        const int s = item % subs;
        if (t != waited_tile) {
            for (int p = 0; p < W; ++p) co_await TWAIT(blk, a.ready(me, p, t), CmpOp::GE, 1);
            waited_tile = t;
        }
        co_await ub.load(a.sub_tile(a.partial[0], t, s));
        const int last = skip_last_partial ? W - 1 : W;  // fault: the last rank's partial left out
        for (int p = 1; p < last; ++p) co_await ub.add(a.sub_tile(a.partial[static_cast<std::size_t>(p)], t, s));
        co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(me)], t, s));
        ub.finish_item();
    }
    ub.drain();
}

class OneShotRun final : public PartialsRun {
public:
    // The reduction sums the W partials in fp32 (fp16, bf16 outputs), as Iris's does.
    explicit OneShotRun(const OpParams& p) : PartialsRun(p, /*ring=*/false, collectives::fused_sum_dtype(p.out_dtype)) {}

protected:
    ViewPlan pipelined_view(int rank) const override {
        const PartialsArgs a = args(rank);
        const bool fault = params().fault == "skip_partial";
        KernelLaunch reduce{"OneShotReduceKernel", CoreType::AIV, params().comm_blocks,
                            [a, fault](BlockCtx& blk) { return one_shot_reduce_kernel(blk, a, fault); }};
        if (stream_k()) {
            // A tile's partial lands in P and is flagged on every rank: from L0C when whole, from
            // UB after its fix-up when split.
            TileSink sink;
            sink.targets = [a](int t) {
                return std::vector<GmTensor>{a.partial[static_cast<std::size_t>(a.rank)].sub(
                    t / a.n_tiles * a.base_m, t % a.n_tiles * a.base_n, a.base_m, a.base_n)};
            };
            sink.notify = [a](int t) {
                std::vector<SignalAddr> flags;
                for (int k = 0; k < a.layout.ranks; ++k) flags.push_back(a.ready((a.rank + k) % a.layout.ranks, a.rank, t));
                return flags;
            };
            return launched_together(
                in_order(reset_flags(rank), reset_stream_k(rank)),
                {{kComputeStream, make_stream_k_gemm_kernel("MatmulPartialNotifyStreamKKernel", stream_k_gemm(rank), sink)},
                 {kCommStream, std::move(reduce)}});
        }
        return partials_view(rank, Readers::All, std::move(reduce));
    }
};

}  // namespace

VariantDesc one_shot_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "one_shot",
                                   "GEMM (AIC) stores partials locally and flags each tile on every rank; a reduction "
                                   "kernel (AIV) on every rank pulls all W partials of each tile and sums them");
    v.constraints = "any M, N, K (padded to base-m, base-n); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (partials in the "
                    "output dtype, summed in fp32)";
    // stream_k/hybrid: the MIX GEMM kernel's AIVs do the fix-ups while this variant's reduction
    // kernel runs on another stream, on cores of its own (sim/core/stream_cores.hpp).
    v.schedules = gemm_schedule_names();
    v.faults = {"skip_partial", "skip_fixup_partial"};
    v.workspace_bytes = [](const OpParams& p) { return mar_workspace_bytes(p, partials_variant_bytes(p)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<OneShotRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mar
