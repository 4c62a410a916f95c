// The `ring` variant (Iris's matmul_all_reduce "ring"): a ring reduce-scatter then a ring
// all-gather, per comm sub-tile, through a ring buffer with flags. GEMM kernel (AIC): partials
// into the local P, each tile flagged on the rank itself. Ring kernel (AIV): tile t belongs to
// rank o = t % W; its reduce-scatter chain starts at o+1 and runs o+1 -> o+2 -> ... -> o (W-1
// steps): each rank adds its own partial to what arrived in its ring buffer slot and stores the
// running sum into the next rank's slot (UB -> peer GM on MTE3), then sets the next rank's
// arrival flag; the owner, last, has the sum: it stores it locally and into the next rank's
// output, and the all-gather chain o -> o+1 -> ... -> o-1 (W-1 steps) forwards it. Each rank only
// ever writes to its ring neighbour: the algorithm for ring interconnects (A3), where a full
// mesh's direct writes would cross several hops. A block does its reduce-scatter items first,
// then its all-gather items (the same items, in the same order on every rank, so block b of a
// rank only ever waits on block b of its left neighbour: no deadlock).
#include "kernels/common/collectives/ub_stage.hpp"
#include "kernels/matmul_all_reduce/partials_run.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels::mar {

namespace {

int mod(int v, int n) { return ((v % n) + n) % n; }

Task ring_reduce_kernel(BlockCtx& blk, PartialsArgs a, bool skip_own_partial) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int next = (me + 1) % W;
    const int subs = a.subs();
    const int items = a.layout.tiles * subs;
    collectives::UbStage ub(blk, a.layout.sub.tile_rows, a.layout.sub.tile_cols, a.out[0].dtype());
    const GmTensor& own = a.partial[static_cast<std::size_t>(me)];
    // Reduce-scatter: this rank's step d = (me - o - 1) mod W of tile t's chain.
    int waited_tile = -1;
    for (int item = blk.block_idx(); item < items; item += blk.block_num()) {
        const int t = item / subs;
        const int s = item % subs;
        const int d = mod(me - tile_owner(t, W) - 1, W);
        if (t != waited_tile) {
            co_await TWAIT(blk, a.ready(me, me, t), CmpOp::GE, 1);  // own partial stored
            waited_tile = t;
        }
        if (d > 0) co_await TWAIT(blk, a.rs_arrived(me, t, s), CmpOp::GE, 1);
        const bool owner = d == W - 1;
        if (owner && skip_own_partial && W > 1) {
            co_await ub.load(a.sub_tile(a.ring_buf[static_cast<std::size_t>(me)], t, s));  // fault: own partial left out
        } else {
            co_await ub.load(a.sub_tile(own, t, s));
            if (d > 0) co_await ub.add(a.sub_tile(a.ring_buf[static_cast<std::size_t>(me)], t, s));
        }
        if (!owner) {
            co_await ub.store(a.sub_tile(a.ring_buf[static_cast<std::size_t>(next)], t, s));
        } else {
            co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(me)], t, s));
            if (W > 1) co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(next)], t, s));
        }
        ub.finish_item();
        if (W > 1) {
            pipe_barrier(blk, PIPE_ALL);  // the data is at the next rank before its flag
            TNOTIFY(blk, owner ? a.ag_arrived(next, t, s) : a.rs_arrived(next, t, s), 1, NotifyOp::Set);
        }
    }
    // All-gather: this rank's step e = (me - o) mod W; e == W-1 is the chain's end.
    for (int item = blk.block_idx(); item < items && W > 1; item += blk.block_num()) {
        const int t = item / subs;
        const int s = item % subs;
        const int e = mod(me - tile_owner(t, W), W);
        if (e == 0) continue;  // the owner sent it already
        co_await TWAIT(blk, a.ag_arrived(me, t, s), CmpOp::GE, 1);
        if (e == W - 1) continue;
        co_await ub.load(a.sub_tile(a.out[static_cast<std::size_t>(me)], t, s));
        co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(next)], t, s));
        ub.finish_item();
        pipe_barrier(blk, PIPE_ALL);
        TNOTIFY(blk, a.ag_arrived(next, t, s), 1, NotifyOp::Set);
    }
    ub.drain();
}

class RingRun final : public PartialsRun {
public:
    explicit RingRun(const OpParams& p) : PartialsRun(p, /*ring=*/true, p.out_dtype) {}

protected:
    ViewPlan pipelined_view(int rank) const override {
        const PartialsArgs a = args(rank);
        const bool fault = params().fault == "skip_own_partial";
        KernelLaunch reduce{"RingReduceScatterAllGatherKernel", CoreType::AIV, params().comm_blocks,
                            [a, fault](BlockCtx& blk) { return ring_reduce_kernel(blk, a, fault); }};
        return partials_view(rank, Readers::Self, std::move(reduce));
    }
};

}  // namespace

VariantDesc ring_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "ring",
                                   "GEMM (AIC) stores partials locally; a ring kernel (AIV) runs a ring reduce-scatter "
                                   "then a ring all-gather per sub-tile through a ring buffer with flags (W-1 + W-1 "
                                   "steps, neighbour writes only)");
    v.constraints = "any M, N, K (padded to base-m, base-n); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (running sums in "
                    "the output dtype)";
    v.faults = {"skip_own_partial"};
    v.workspace_bytes = [](const OpParams& p) { return mar_workspace_bytes(p, partials_variant_bytes(p, true)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<RingRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mar
