// The `two_shot` variant (Iris's matmul_all_reduce "two_shot"): a reduce-scatter to tile owners,
// then the owners broadcast. Tile t belongs to rank t % W (interleaved, so every rank owns tiles
// of every GEMM wave).
//   GEMM kernel (AIC): partials into the local P, each tile flagged on the rank itself.
//   Reduction kernel (AIV), two kinds of blocks:
//     push blocks (the first half): for each comm sub-tile of the tiles this rank does not own, in
//       the order the GEMM makes them: wait for the local flag, load the partial, store it into
//       the owner's inbox (UB -> peer GM on MTE3), pipe_barrier, flag it there;
//     reduce blocks (the second half): for each sub-tile of an owned tile: wait for the own
//       partial and the W-1 arrivals, sum in rank order, store the sum locally and into every
//       peer's output, pipe_barrier, add one to each peer's arrival counter.
//   Every block finally waits until all sub-tiles owned by the peers have arrived.
// Traffic per rank: (W-1)/W x C of partials out and (W-1)/W x C of sums out, 2 (W-1)/W x C in
// all (the all-reduce's bus bytes), all of it stores by this rank's comm stream: each directed
// link carries only its sender's comm stream, as sim/MODEL.md's link model assumes. (Pulling the
// partials instead, as Iris does with remote loads, would put the receiver's loads and the
// sender's stores on one link from two streams, which the model does not contend.) Push blocks
// never wait on a peer, so the reduce blocks' waits always end.
#include "kernels/common/collectives/ub_stage.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/matmul_all_reduce/partials_run.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels::mar {

namespace {

Task push_partials(BlockCtx& blk, const PartialsArgs& a, collectives::UbStage& ub, int first, int stride) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int subs = a.subs();
    int waited_tile = -1;
    for (int item = first; item < a.layout.tiles * subs; item += stride) {
        const int t = item / subs;
        const int s = item % subs;
        const int owner = tile_owner(t, W);
        if (owner == me) continue;
        if (t != waited_tile) {
            co_await TWAIT(blk, a.ready(me, me, t), CmpOp::GE, 1);
            waited_tile = t;
        }
        co_await ub.load(a.sub_tile(a.partial[static_cast<std::size_t>(me)], t, s));
        co_await ub.store(a.inbox_sub_tile(owner, me, t, s));
        ub.finish_item();
        pipe_barrier(blk, PIPE_ALL);  // the partial is at the owner before its flag
        TNOTIFY(blk, a.inbox_arrived(owner, me, t, s), 1, NotifyOp::Set);
    }
}

Task reduce_owned(BlockCtx& blk, const PartialsArgs& a, collectives::UbStage& ub, int first, int stride,
                  bool skip_broadcast) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    const int subs = a.subs();
    std::vector<int> owned;
    for (int t = me; t < a.layout.tiles; t += W) owned.push_back(t);
    int waited_tile = -1;
    for (int item = first; item < static_cast<int>(owned.size()) * subs; item += stride) {
        const int t = owned[static_cast<std::size_t>(item / subs)];
        const int s = item % subs;
        if (t != waited_tile) {
            co_await TWAIT(blk, a.ready(me, me, t), CmpOp::GE, 1);
            waited_tile = t;
        }
        for (int p = 0; p < W; ++p)
            if (p != me) co_await TWAIT(blk, a.inbox_arrived(me, p, t, s), CmpOp::GE, 1);
        auto partial_of = [&](int p) {
            return p == me ? a.sub_tile(a.partial[static_cast<std::size_t>(me)], t, s) : a.inbox_sub_tile(me, p, t, s);
        };
        co_await ub.load(partial_of(0));
        for (int p = 1; p < W; ++p) co_await ub.add(partial_of(p));
        co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(me)], t, s));
        for (int k = 1; k < W; ++k) {
            if (skip_broadcast && k == W - 1) continue;  // fault: one peer never gets the sum
            // Rotated per item so the reduce blocks write to all peers at once.
            const int q = (me + 1 + (k - 1 + item) % (W - 1)) % W;
            co_await ub.store(a.sub_tile(a.out[static_cast<std::size_t>(q)], t, s));
        }
        ub.finish_item();
        pipe_barrier(blk, PIPE_ALL);  // the sums are at the peers before their counters move
        for (int k = 1; k < W; ++k) TNOTIFY(blk, a.counter((me + k) % W), 1, NotifyOp::AtomicAdd);
    }
}

Task two_shot_reduce_kernel(BlockCtx& blk, PartialsArgs a, bool skip_broadcast) {
    const int W = a.layout.ranks;
    const int blocks = blk.block_num();
    const int b = blk.block_idx();
    collectives::UbStage ub(blk, a.layout.sub.tile_rows, a.layout.sub.tile_cols, a.out[0].dtype(),
                            collectives::fused_sum_dtype(a.out[0].dtype()));
    if (blocks == 1) {  // one block does both, pushes first (they never wait on a peer)
        co_await push_partials(blk, a, ub, 0, 1);
        co_await reduce_owned(blk, a, ub, 0, 1, skip_broadcast);
    } else {
        const int pushers = blocks / 2;
        if (b < pushers) co_await push_partials(blk, a, ub, b, pushers);
        else co_await reduce_owned(blk, a, ub, b - pushers, blocks - pushers, skip_broadcast);
    }
    // Every sub-tile the peers own has arrived here.
    const int peers_tiles = a.layout.tiles - ceil_div(a.layout.tiles - a.rank, W);
    co_await TWAIT(blk, a.counter(a.rank), CmpOp::GE, peers_tiles * a.subs());
    ub.drain();
}

class TwoShotRun final : public PartialsRun {
public:
    // The inbox uses the ring's room; the owner sums the partials in fp32 (fp16, bf16 outputs).
    explicit TwoShotRun(const OpParams& p)
        : PartialsRun(p, /*ring=*/true, collectives::fused_sum_dtype(p.out_dtype)) {}

protected:
    ViewPlan pipelined_view(int rank) const override {
        const PartialsArgs a = args(rank);
        const bool fault = params().fault == "skip_broadcast";
        KernelLaunch reduce{"TwoShotReduceBroadcastKernel", CoreType::AIV, params().comm_blocks,
                            [a, fault](BlockCtx& blk) { return two_shot_reduce_kernel(blk, a, fault); }};
        return partials_view(rank, Readers::Self, std::move(reduce));
    }
};

}  // namespace

VariantDesc two_shot_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "two_shot",
                                   "GEMM (AIC) stores partials locally; the comm kernel (AIV) pushes each partial to its "
                                   "tile's owner, which sums the W partials and stores the sum into every rank's output");
    v.constraints = "any M, N, K (padded to base-m, base-n); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (partials in the "
                    "output dtype, summed in fp32)";
    v.faults = {"skip_broadcast"};
    v.workspace_bytes = [](const OpParams& p) { return mar_workspace_bytes(p, partials_variant_bytes(p, true)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<TwoShotRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mar
