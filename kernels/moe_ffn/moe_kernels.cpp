// moe_ffn's bulk and per_expert schedules (moe_kernels.hpp), composed of the stage pieces of
// moe_stages.hpp.
#include "kernels/moe_ffn/moe_kernels.hpp"

#include <algorithm>

#include "kernels/moe_ffn/moe_stages.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

namespace {

using Rank = std::shared_ptr<const MoeRank>;

Crew crew_of(const BlockCtx& blk) { return Crew{blk.block_idx(), blk.block_num()}; }

// The rank's routes sorted in chunks dealt over the blocks, the count runs on the last block, the
// block's share of tokens quantised and stored per route, the count rows sent; then every rank's
// reorder is complete (an all-rank barrier: the count rows are in place).
Task front_reorder(BlockCtx& blk, const MoeRank& a) {
    const MoeShape& s = a.tables->shape;
    const Crew c = crew_of(blk);
    const int R = s.routes();
    const int chunk = std::min(R, kSortChunk);
    for (int c0 = c.index * chunk; c0 < R; c0 += c.count * chunk) co_await sort_keys(blk, a, c0, std::min(chunk, R - c0), 1, false);
    if (c.index == c.count - 1) TSCALAR(blk, R);  // the count runs: a scalar loop over R
    const auto [t0, t1] = share(s.m, c);
    co_await quantize_routes(blk, a, t0 * s.topk, t1 * s.topk);
    co_await send_count_rows(blk, a, c, false);
    co_await device_barrier(blk, a.after_reorder);
}

// The (expert, source) pairs with rows dealt over the blocks, own rows first, then the peers in
// rotated order; one count per expert. (Pairs without rows are skipped, not dealt: past EP 64 most
// are empty, and dealt in turn with the others they would leave most blocks idle.)
Task dispatch(BlockCtx& blk, const MoeRank& a) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const Crew c = crew_of(blk);
    PullBuffers p = alloc_pull_buffers(blk, a);
    int pair = 0;
    for (int e = 0; e < s.experts; ++e) {
        const auto g = static_cast<std::size_t>(t.global_expert(a.rank, e));
        for (int j = 0; j < s.ranks; ++j) {
            const int src = (a.rank + j) % s.ranks;
            if (t.count[static_cast<std::size_t>(src)][g] == 0) continue;
            if (pair++ % c.count == c.index) co_await pull_rows(blk, a, p, e, src, false);
        }
        release(blk, a.slot(a.slots->dispatched, e), 1, NotifyOp::AtomicAdd);
    }
    drain_pull_buffers(blk);
}

// The source-side dispatch (moe_kernels.hpp, push_dispatch_kernel). The barrier is the layout's
// second, which nothing else uses where the layout has an inbox.
Task push_dispatch(BlockCtx& blk, const MoeRank& a) {
    const RouteTables& t = *a.tables;
    const Crew c = crew_of(blk);
    PullBuffers p = alloc_pull_buffers(blk, a);
    const auto [j0, j1] = share(t.shape.routes(), c);
    co_await push_rows(blk, a, p, j0, j1);
    co_await device_barrier(blk, a.after_combine);
    const auto [r0, r1] = share(t.recv_total[static_cast<std::size_t>(a.rank)], c);
    co_await copy_inbox_rows(blk, a, p, r0, r1);
    drain_pull_buffers(blk);
}

Task grouped_gemm(BlockCtx& blk, const MoeRank& a, GemmStage g, int wait_on, int wait_count, int done) {
    const Crew c = crew_of(blk);
    GemmBuffers buf = alloc_gemm_buffers(blk, g);
    int rotation = 0;
    for (int e = 0; e < a.tables->shape.experts; ++e) {
        co_await TWAIT(blk, a.slot(wait_on, e), CmpOp::GE, wait_count);
        co_await gemm_expert(blk, a, g, buf, e, c, rotation, false);
        release(blk, a.slot(done, e), 1, NotifyOp::AtomicAdd);
    }
    drain_gemm_buffers(blk, buf);
}

Task swiglu(BlockCtx& blk, const MoeRank& a, int gmm1_blocks) {
    const RouteTables& t = *a.tables;
    SwigluBuffers b = alloc_swiglu_buffers(blk, a);
    for (int e = 0; e < t.shape.experts; ++e) {
        co_await TWAIT(blk, a.slot(a.slots->gmm1_done, e), CmpOp::GE, gmm1_blocks);
        const int base = t.recv_base[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)];
        const auto [r0, r1] = share(t.recv_rows[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)], crew_of(blk));
        co_await swiglu_rows(blk, a, b, e, base + r0, base + r1);
        release(blk, a.slot(a.slots->swiglu_done, e), 1, NotifyOp::AtomicAdd);
    }
}

// Per expert, the block's contiguous share of the expert's rows (sources in rank order); then an
// all-rank barrier (every combined row has landed).
Task combine(BlockCtx& blk, const MoeRank& a, int gmm2_blocks) {
    const RouteTables& t = *a.tables;
    CombineBuffers b = alloc_combine_buffers(blk, a);
    for (int e = 0; e < t.shape.experts; ++e) {
        co_await TWAIT(blk, a.slot(a.slots->gmm2_done, e), CmpOp::GE, gmm2_blocks);
        const int g = t.global_expert(a.rank, e);
        const auto [j0, j1] = share(t.recv_rows[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)], crew_of(blk));
        for (int src = 0, first = 0; src < t.shape.ranks && first < j1; ++src) {
            const int rows = t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(g)];
            const int i0 = std::max(j0, first) - first, i1 = std::min(j1, first + rows) - first;
            if (i1 > i0) co_await combine_rows(blk, a, b, e, src, i0, i1);
            first += rows;
        }
    }
    co_await device_barrier(blk, a.after_combine);
}

Task unpermute(BlockCtx& blk, const MoeRank& a) {
    UnpermuteBuffers b = alloc_unpermute_buffers(blk, a);
    const auto [t0, t1] = share(a.tables->shape.m, crew_of(blk));
    co_await unpermute_tokens(blk, a, b, t0, t1, TokenSet::All, 0);
}

Task reorder_then_dispatch(BlockCtx& blk, Rank a, ThenDispatch then) {
    co_await front_reorder(blk, *a);
    if (then == ThenDispatch::Pull) co_await dispatch(blk, *a);
    if (then == ThenDispatch::Push) co_await push_dispatch(blk, *a);
}
Task run_dispatch(BlockCtx& blk, Rank a) { co_await dispatch(blk, *a); }
Task run_push_dispatch(BlockCtx& blk, Rank a) { co_await push_dispatch(blk, *a); }
Task run_gemm(BlockCtx& blk, Rank a, GemmStage g, int wait_on, int wait_count, int done) {
    co_await grouped_gemm(blk, *a, g, wait_on, wait_count, done);
}
Task run_swiglu(BlockCtx& blk, Rank a, int gmm1_blocks) { co_await swiglu(blk, *a, gmm1_blocks); }
Task combine_then_unpermute(BlockCtx& blk, Rank a, int gmm2_blocks, bool then_unpermute) {
    co_await combine(blk, *a, gmm2_blocks);
    if (then_unpermute) co_await unpermute(blk, *a);
}
Task run_unpermute(BlockCtx& blk, Rank a) { co_await unpermute(blk, *a); }

}  // namespace

KernelLaunch front_reorder_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, ThenDispatch then) {
    const char* name = then == ThenDispatch::None ? "MoeFrontReorder" : then == ThenDispatch::Pull ? "MoeReorderDispatch" : "MoeReorderPush";
    return KernelLaunch{name, CoreType::AIV, b.reorder, [a, then](BlockCtx& blk) { return reorder_then_dispatch(blk, a, then); }};
}

KernelLaunch dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoeDispatch", CoreType::AIV, b.dispatch, [a](BlockCtx& blk) { return run_dispatch(blk, a); }};
}

KernelLaunch push_dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoePushDispatch", CoreType::AIV, b.dispatch, [a](BlockCtx& blk) { return run_push_dispatch(blk, a); }};
}

KernelLaunch gmm1_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    const GemmStage g = gmm1_stage(a->tables->shape);
    const int wait_on = a->slots->dispatched, count = b.dispatch, done = a->slots->gmm1_done;
    return KernelLaunch{"MoeGmm1", CoreType::AIC, b.gmm1,
                        [a, g, wait_on, count, done](BlockCtx& blk) { return run_gemm(blk, a, g, wait_on, count, done); }};
}

KernelLaunch swiglu_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    const int gmm1 = b.gmm1;
    return KernelLaunch{"MoeSwiglu", CoreType::AIV, b.swiglu, [a, gmm1](BlockCtx& blk) { return run_swiglu(blk, a, gmm1); }};
}

KernelLaunch gmm2_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    const GemmStage g = gmm2_stage(a->tables->shape);
    const int wait_on = a->slots->swiglu_done, count = b.swiglu, done = a->slots->gmm2_done;
    return KernelLaunch{"MoeGmm2", CoreType::AIC, b.gmm2,
                        [a, g, wait_on, count, done](BlockCtx& blk) { return run_gemm(blk, a, g, wait_on, count, done); }};
}

KernelLaunch combine_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_unpermute) {
    const int gmm2 = b.gmm2;
    return KernelLaunch{then_unpermute ? "MoeCombineUnpermute" : "MoeCombine", CoreType::AIV, b.combine,
                        [a, gmm2, then_unpermute](BlockCtx& blk) { return combine_then_unpermute(blk, a, gmm2, then_unpermute); }};
}

KernelLaunch unpermute_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoeUnpermute", CoreType::AIV, b.unpermute, [a](BlockCtx& blk) { return run_unpermute(blk, a); }};
}

}  // namespace tandem::kernels::moe
