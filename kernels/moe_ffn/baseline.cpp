// The published MegaMoE baseline schedule on Tandem (baseline.hpp; README.md "The baseline
// replica"), composed of the stage pieces of moe_stages.hpp.
#include "kernels/moe_ffn/baseline.hpp"

#include <algorithm>

#include "kernels/common/int_math.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "kernels/moe_ffn/published_front.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

namespace {

using Rank = std::shared_ptr<const MoeRank>;

// FFTS flag ids (mode 2, within a cluster). Received by the AIC: Dispatch's expert e on
// e mod 8, SwiGLU's segments on 8 and 9. Received by the AIVs: GMM1's segments on 8 and 9,
// GMM2's expert e on 10 + e mod 4. (15 is the SYNCALLs'.) A flag id's counter holds 15 counts;
// no id here gets more than 2 (or 4) ahead of its consumer.
int dispatch_flag(int e) { return e % 8; }
int segment_flag(int seg) { return 8 + seg; }
int gmm2_flag(int e) { return 10 + e % 4; }

int segment_of(const BaselineSchedule& sc, int e) { return e < sc.segment_cut ? 0 : 1; }
bool last_of_segment(const BaselineSchedule& sc, int e, int experts) { return e == sc.segment_cut - 1 || e == experts - 1; }

// The producing side's cores meet (SYNCALL), then each cluster's part tells the others.
Task hand_over(BlockCtx& blk, int flag) {
    co_await syncall(blk);
    CrossCoreSetFlag(blk, 2, PIPE_S, flag);
}

// ---- the AIVs: stage by stage ----------------------------------------------------------------
Task aiv_part(BlockCtx& blk, Rank ap, BaselineSchedule sc, bool ffn_only) {
    const MoeRank& a = *ap;
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int aivs = 2 * sc.clusters;
    const int v = 2 * blk.block_idx() + blk.sub_block_idx();
    const Crew all{v, aivs};
    if (ffn_only) {
        for (int e = 0; e < s.experts; ++e) CrossCoreSetFlag(blk, 2, PIPE_S, dispatch_flag(e));  // the tokens are in place
    } else {
        co_await published_front_reorder(blk, a, sc.clusters, v);
        // Dispatch: W copy AIVs (AIV w pulls sources w, w + D, ...), a SYNCALL per expert.
        const int D = std::min(s.ranks, aivs);
        const std::size_t mark = blk.tile_mark();
        PullBuffers p = alloc_pull_buffers(blk, a);
        for (int e = 0; e < s.experts; ++e) {
            if (v < D)
                for (int src = v; src < s.ranks; src += D) co_await pull_rows(blk, a, p, e, src, true);
            co_await hand_over(blk, dispatch_flag(e));
        }
        drain_pull_buffers(blk);
        pipe_barrier(blk, PIPE_ALL);
        blk.free_tiles_since(mark);
    }
    // SwiGLU, segment by segment, on every AIV.
    {
        const std::size_t mark = blk.tile_mark();
        SwigluBuffers b = alloc_swiglu_buffers(blk, a);
        for (int seg = 0; seg < 2; ++seg) {
            const int e0 = seg == 0 ? 0 : sc.segment_cut, e1 = seg == 0 ? sc.segment_cut : s.experts;
            if (e0 >= e1) continue;
            co_await CrossCoreWaitFlag(blk, segment_flag(seg));
            for (int e = e0; e < e1; ++e) {
                const int base = t.recv_base[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)];
                const auto [r0, r1] = share(t.recv_rows[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)], all);
                co_await swiglu_rows(blk, a, b, e, base + r0, base + r1);
            }
            co_await hand_over(blk, segment_flag(seg));
        }
        pipe_barrier(blk, PIPE_ALL);
        blk.free_tiles_since(mark);
    }
    // Combine, expert by expert as GMM2 finishes them.
    const std::size_t mark = blk.tile_mark();
    SubtileBuffers sub = sc.small_combine ? alloc_subtile_buffers(blk) : SubtileBuffers{};
    CombineBuffers rows = sc.small_combine ? CombineBuffers{} : alloc_combine_buffers(blk, a);
    for (int e = 0; e < s.experts; ++e) {
        co_await CrossCoreWaitFlag(blk, gmm2_flag(e));
        if (ffn_only) continue;
        const int n = t.recv_rows[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)];
        const int g = t.global_expert(a.rank, e);
        if (sc.small_combine) {
            // 16 x 256 sub-tiles of the expert's output, dealt round-robin over the AIVs.
            const int col_tiles = s.k / kTileN, subtiles = ceil_div(n, kSubtileRows) * col_tiles;
            for (int j = v; j < subtiles; j += aivs) {
                const int r0 = j / col_tiles * kSubtileRows;
                co_await combine_subtile(blk, a, sub, e, r0, std::min(kSubtileRows, n - r0), j % col_tiles * kTileN);
            }
        } else if (v < 2 * s.ranks) {
            // Rows: two lanes per source rank.
            const int src = v / 2;
            const auto [i0, i1] = share(t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(g)], Crew{v % 2, 2});
            co_await combine_rows(blk, a, rows, e, src, i0, i1);
        }
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
    if (ffn_only) co_return;
    // SYNCALL, then CrossRankSync: AIV0 adds 1 into every peer's word and waits for all of theirs.
    co_await syncall(blk);
    if (v == 0) {
        for (int r = 0; r < s.ranks; ++r)
            if (r != a.rank) TNOTIFY(blk, a.peer_slot(r, a.slots->cross_rank_sync), 1, NotifyOp::AtomicAdd);
        co_await TWAIT(blk, a.slot(a.slots->cross_rank_sync), CmpOp::GE, s.ranks - 1);
    }
    co_await syncall(blk);
    // Unpermute on every AIV.
    UnpermuteBuffers u = alloc_unpermute_buffers(blk, a);
    const auto [t0, t1] = share(s.m, all);
    co_await unpermute_tokens(blk, a, u, t0, t1, TokenSet::All, 0);
}

// ---- the AICs: GMM1 for every expert, then GMM2 ----------------------------------------------
Task aic_part(BlockCtx& blk, Rank ap, BaselineSchedule sc) {
    const MoeRank& a = *ap;
    const MoeShape& s = a.tables->shape;
    const Crew all{blk.block_idx(), sc.clusters};
    {
        const GemmStage g = gmm1_stage(s);
        GemmBuffers buf = alloc_gemm_buffers(blk, g);
        int rotation = 0;
        for (int e = 0; e < s.experts; ++e) {
            co_await CrossCoreWaitFlag(blk, dispatch_flag(e));
            co_await gemm_expert(blk, a, g, buf, e, all, rotation, false);
            if (last_of_segment(sc, e, s.experts)) co_await hand_over(blk, segment_flag(segment_of(sc, e)));
        }
        drain_gemm_buffers(blk, buf);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(0);
    const GemmStage g = gmm2_stage(s);
    GemmBuffers buf = alloc_gemm_buffers(blk, g);
    int rotation = 0;
    for (int e = 0; e < s.experts; ++e) {
        if (e == 0 || e == sc.segment_cut) co_await CrossCoreWaitFlag(blk, segment_flag(segment_of(sc, e)));
        co_await gemm_expert(blk, a, g, buf, e, all, rotation, false);
        co_await hand_over(blk, gmm2_flag(e));
    }
    drain_gemm_buffers(blk, buf);
}

Task baseline_part(BlockCtx& blk, Rank a, BaselineSchedule sc, bool ffn_only) {
    if (blk.core_type() == CoreType::AIC) co_await aic_part(blk, a, sc);
    else co_await aiv_part(blk, a, sc, ffn_only);
}

}  // namespace

BaselineSchedule baseline_schedule(const MoeShape& s, int clusters) {
    BaselineSchedule sc;
    sc.clusters = clusters;
    sc.segment_cut = std::min(sc.segment_cut, s.experts);
    sc.small_combine = std::int64_t{s.m} * s.topk <= 4096;
    return sc;
}

KernelLaunch baseline_kernel(const std::shared_ptr<const MoeRank>& a, const BaselineSchedule& sc, bool ffn_only) {
    return KernelLaunch{ffn_only ? "MoeBaselineFfn" : "MoeBaseline", KernelType::MIX, sc.clusters,
                        [a, sc, ffn_only](BlockCtx& blk) { return baseline_part(blk, a, sc, ffn_only); }};
}

}  // namespace tandem::kernels::moe
