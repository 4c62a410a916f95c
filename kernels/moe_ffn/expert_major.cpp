// The published MegaMoE V1 ("expert-major") schedule on Tandem (expert_major.hpp; README.md
// "The expert_major replica"), composed of the stage pieces of moe_stages.hpp.
#include "kernels/moe_ffn/expert_major.hpp"

#include <algorithm>

#include "kernels/moe_ffn/moe_stages.hpp"
#include "kernels/moe_ffn/published_front.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

namespace {

using Rank = std::shared_ptr<const MoeRank>;

// A coordinator: once `producers` arrivals are in for expert e, the consumers' ready is set.
Task coordinate(BlockCtx& blk, SignalAddr arrivals, int producers, SignalAddr ready) {
    co_await TWAIT(blk, arrivals, CmpOp::GE, producers);
    TNOTIFY(blk, ready, 1, NotifyOp::Set);
}

// ---- Unpermute: phase 1 on the 2 G1 AIVs of clusters 0..G1-1, phase 2 on all 2C --------------
Task unpermute_phase1(BlockCtx& blk, const MoeRank& a, const ExpertMajorSchedule& sc, int w) {
    const MoeShape& s = a.tables->shape;
    const int workers = 2 * sc.gmm1_cores;
    release(blk, a.slot(a.slots->unpermute_release), 1, NotifyOp::AtomicAdd);
    if (w == 0) {
        // The gate: every Dispatch and SwiGLU AIV released, every producer rank past the cut.
        co_await TWAIT(blk, a.slot(a.slots->unpermute_release), CmpOp::GE, workers);
        for (int p = 0; p < s.ranks; ++p) co_await TWAIT(blk, a.slot(a.slots->progress, p), CmpOp::GE, sc.unpermute_cut);
        TNOTIFY(blk, a.slot(a.slots->unpermute_phase1), 1, NotifyOp::Set);
    }
    co_await TWAIT(blk, a.slot(a.slots->unpermute_phase1), CmpOp::GE, 1);
    const std::size_t mark = blk.tile_mark();
    UnpermuteBuffers b = alloc_unpermute_buffers(blk, a);
    const auto [t0, t1] = share(s.m, Crew{w, workers});
    co_await unpermute_tokens(blk, a, b, t0, t1, TokenSet::RoutesBelowCut, sc.unpermute_cut);
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
    release(blk, a.slot(a.slots->unpermute_phase1_done), 1, NotifyOp::AtomicAdd);
}

Task unpermute_phase2(BlockCtx& blk, const MoeRank& a, const ExpertMajorSchedule& sc, int v) {
    const MoeShape& s = a.tables->shape;
    if (v == 0) {
        co_await TWAIT(blk, a.slot(a.slots->unpermute_phase1_done), CmpOp::GE, 2 * sc.gmm1_cores);
        for (int p = 0; p < s.ranks; ++p) co_await TWAIT(blk, a.slot(a.slots->progress, p), CmpOp::GE, s.experts);
        co_await TWAIT(blk, a.slot(a.slots->combine_finished), CmpOp::GE, sc.clusters - sc.gmm1_cores);
        TNOTIFY(blk, a.slot(a.slots->unpermute_phase2), 1, NotifyOp::Set);
    }
    co_await TWAIT(blk, a.slot(a.slots->unpermute_phase2), CmpOp::GE, 1);
    const std::size_t mark = blk.tile_mark();
    UnpermuteBuffers b = alloc_unpermute_buffers(blk, a);
    const auto [t0, t1] = share(s.m, Crew{v, 2 * sc.clusters});
    co_await unpermute_tokens(blk, a, b, t0, t1, TokenSet::NotAllBelowCut, sc.unpermute_cut);
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

// ---- stream 0: AIV0 of clusters 0..G1-1 ------------------------------------------------------
Task aiv0_low(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc) {
    const MoeRank& a = *ap;
    const MoeShape& s = a.tables->shape;
    const int b = blk.block_idx();
    co_await published_front_reorder(blk, a, sc.clusters, 2 * b);
    // Dispatch: worker b pulls the rows of sources b, b + D, ... expert by expert; worker
    // (rank mod D) coordinates each expert's GMM1 ready.
    const int D = std::min(s.ranks, sc.gmm1_cores);
    if (b < D) {
        const std::size_t mark = blk.tile_mark();
        PullBuffers p = alloc_pull_buffers(blk, a);
        for (int e = 0; e < s.experts; ++e) {
            for (int src = b; src < s.ranks; src += D) co_await pull_rows(blk, a, p, e, src, true);
            if (a.fault == Fault::FlagBeforeRows) TNOTIFY(blk, a.slot(a.slots->dispatch_arrival, e), 1, NotifyOp::AtomicAdd);
            else release(blk, a.slot(a.slots->dispatch_arrival, e), 1, NotifyOp::AtomicAdd);
            if (b == a.rank % D) co_await coordinate(blk, a.slot(a.slots->dispatch_arrival, e), D, a.slot(a.slots->gmm1_ready, e));
        }
        drain_pull_buffers(blk);
        pipe_barrier(blk, PIPE_ALL);
        blk.free_tiles_since(mark);
    }
    co_await unpermute_phase1(blk, a, sc, 2 * b);
    co_await unpermute_phase2(blk, a, sc, 2 * b);
}

// ---- stream 2: AIV1 of clusters 0..G1-1 (SwiGLU) ---------------------------------------------
Task swiglu_group(BlockCtx& blk, const MoeRank& a, const ExpertMajorSchedule& sc) {
    const RouteTables& t = *a.tables;
    const int b = blk.block_idx();
    const int S = sc.swiglu_aivs;
    if (b >= S) co_return;
    const std::size_t mark = blk.tile_mark();
    SwigluBuffers buf = alloc_swiglu_buffers(blk, a);
    for (int e = 0; e < t.shape.experts; ++e) {
        // After the shrink, SwiGLU's coordinator (its worker 0) collects the G1 GMM1 arrivals.
        if (b == 0 && e >= sc.full_gmm1_experts)
            co_await coordinate(blk, a.slot(a.slots->gmm1_arrival, e), sc.gmm1_cores, a.slot(a.slots->swiglu_ready, e));
        co_await TWAIT(blk, a.slot(a.slots->swiglu_ready, e), CmpOp::GE, 1);
        const int base = t.recv_base[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)];
        const auto [r0, r1] = share(t.recv_rows[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(e)], Crew{b, S});
        co_await swiglu_rows(blk, a, buf, e, base + r0, base + r1);
        release(blk, a.slot(a.slots->swiglu_arrival, e), 1, NotifyOp::AtomicAdd);
        if (b == 0) co_await coordinate(blk, a.slot(a.slots->swiglu_arrival, e), S, a.slot(a.slots->gmm2_ready, e));
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task aiv1_low(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc, bool ffn_only) {
    const MoeRank& a = *ap;
    const int b = blk.block_idx();
    if (!ffn_only) co_await published_front_reorder(blk, a, sc.clusters, 2 * b + 1);
    co_await swiglu_group(blk, a, sc);
    if (ffn_only) co_return;
    co_await unpermute_phase1(blk, a, sc, 2 * b + 1);
    co_await unpermute_phase2(blk, a, sc, 2 * b + 1);
}

// ---- GMM1 (streams 1 and 3): experts 0..F-1 on all C AICs, the rest on G1 ------------------
Task gmm1_part(BlockCtx& blk, const MoeRank& a, const ExpertMajorSchedule& sc, GemmBuffers& buf, int core) {
    const MoeShape& s = a.tables->shape;
    const GemmStage g = gmm1_stage(s);
    int rotation = 0;
    for (int e = 0; e < s.experts; ++e) {
        const bool full = e < sc.full_gmm1_experts;
        if (!full && core >= sc.gmm1_cores) break;  // the primaries leave for GMM2
        co_await TWAIT(blk, a.slot(a.slots->gmm1_ready, e), CmpOp::GE, 1);
        co_await gemm_expert(blk, a, g, buf, e, Crew{core, full ? sc.clusters : sc.gmm1_cores}, rotation, full);
        if (full) {
            // SYNCALL<AICOnly> over every AIC, then AIC0 sets SwiGLU's ready itself.
            co_await syncall(blk);
            if (core == 0) TNOTIFY(blk, a.slot(a.slots->swiglu_ready, e), 1, NotifyOp::Set);
        } else {
            release(blk, a.slot(a.slots->gmm1_arrival, e), 1, NotifyOp::AtomicAdd);
        }
    }
    // gmm1Done: AIC0's own completion, not a barrier over the group.
    if (core == 0) release(blk, a.slot(a.slots->gmm1_finished), 1, NotifyOp::Set);
}

// One GMM2 expert on `crew`, then its arrival.
Task gmm2_expert(BlockCtx& blk, const MoeRank& a, GemmBuffers& buf, int e, Crew crew, int& rotation) {
    co_await TWAIT(blk, a.slot(a.slots->gmm2_ready, e), CmpOp::GE, 1);
    co_await gemm_expert(blk, a, gmm2_stage(a.tables->shape), buf, e, crew, rotation, false);
    release(blk, a.slot(a.slots->gmm2_arrival, e), 1, NotifyOp::AtomicAdd);
}

// Stream 1: GMM1, then GMM2 as a helper from the join expert (if any) on.
Task aic_low(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc) {
    const MoeRank& a = *ap;
    const MoeShape& s = a.tables->shape;
    const int core = blk.block_idx();
    {
        GemmBuffers buf = alloc_gemm_buffers(blk, gmm1_stage(s));
        co_await gmm1_part(blk, a, sc, buf, core);
        drain_gemm_buffers(blk, buf);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(0);
    const SignalAddr join = a.slot(a.slots->gmm2_join);
    co_await TWAIT(blk, join, CmpOp::GE, MoeSlots::kJoinBit);
    int from = s.experts;  // the sentinel: no join
    for (int e = sc.join_check; e < s.experts; ++e) {
        if (co_await TTEST(blk, join, CmpOp::EQ, MoeSlots::kJoinBit | (e + 1))) {
            from = e;
            break;
        }
    }
    GemmBuffers buf = alloc_gemm_buffers(blk, gmm2_stage(s));
    int rotation = 0;
    for (int e = from; e < s.experts; ++e) co_await gmm2_expert(blk, a, buf, e, Crew{core, sc.clusters}, rotation);
    drain_gemm_buffers(blk, buf);
}

// Stream 3: GMM1's first experts, then the GMM2 primaries with the join protocol.
Task aic_high(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc) {
    const MoeRank& a = *ap;
    const MoeShape& s = a.tables->shape;
    const int p = blk.block_idx() - sc.gmm1_cores, primaries = sc.clusters - sc.gmm1_cores;
    {
        GemmBuffers buf = alloc_gemm_buffers(blk, gmm1_stage(s));
        co_await gmm1_part(blk, a, sc, buf, sc.gmm1_cores + p);
        drain_gemm_buffers(blk, buf);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(0);
    const SignalAddr join = a.slot(a.slots->gmm2_join);
    GemmBuffers buf = alloc_gemm_buffers(blk, gmm2_stage(s));
    bool joined = false;
    int rotation = 0;
    for (int e = 0; e < s.experts; ++e) {
        if (!joined && e >= sc.join_check) {
            // At each boundary primary 0 reads gmm1Done and writes the decision; the others wait for it.
            if (p == 0) {
                joined = co_await TTEST(blk, a.slot(a.slots->gmm1_finished), CmpOp::GE, 1);
                TNOTIFY(blk, join, joined ? (MoeSlots::kJoinBit | (e + 1)) : e + 1, NotifyOp::Set);
            } else {
                co_await TWAIT(blk, join, CmpOp::GE, e + 1);
                joined = co_await TTEST(blk, join, CmpOp::GE, MoeSlots::kJoinBit);
            }
            if (joined) rotation = 0;  // the 24 rebuild the rotation state for the join expert
        }
        co_await gmm2_expert(blk, a, buf, e, joined ? Crew{sc.gmm1_cores + p, sc.clusters} : Crew{p, primaries}, rotation);
    }
    if (!joined && p == 0) TNOTIFY(blk, join, MoeSlots::kJoinBit | (s.experts + 1), NotifyOp::Set);  // releases the helpers
    drain_gemm_buffers(blk, buf);
}

// ---- stream 4: AIV0 of clusters G1..C-1 (Combine lanes) --------------------------------------
// The GMM2 cores that worked on expert e: the primaries, or every AIC from the join on.
Task gmm2_producers(BlockCtx& blk, const MoeRank& a, const ExpertMajorSchedule& sc, int e, int& producers) {
    producers = sc.clusters - sc.gmm1_cores;
    if (e < sc.join_check) co_return;
    const SignalAddr join = a.slot(a.slots->gmm2_join);
    co_await TWAIT(blk, join, CmpOp::GE, e + 1);
    if (co_await TTEST(blk, join, CmpOp::GE, MoeSlots::kJoinBit) &&
        co_await TTEST(blk, join, CmpOp::LE, MoeSlots::kJoinBit | (e + 1)))
        producers = sc.clusters;
}

Task aiv0_high(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc) {
    const MoeRank& a = *ap;
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int l = blk.block_idx() - sc.gmm1_cores, lanes = sc.clusters - sc.gmm1_cores;
    const int v = 2 * blk.block_idx();
    co_await published_front_reorder(blk, a, sc.clusters, v);
    {
        const std::size_t mark = blk.tile_mark();
        CombineBuffers buf = alloc_combine_buffers(blk, a);
        // The delayed start: GMM2 has finished expert combine_start (its primaries).
        co_await TWAIT(blk, a.slot(a.slots->gmm2_arrival, sc.combine_start), CmpOp::GE, lanes);
        for (int e = 0; e < s.experts; ++e) {
            if (l == a.rank % lanes) {
                int producers = lanes;
                co_await gmm2_producers(blk, a, sc, e, producers);
                co_await coordinate(blk, a.slot(a.slots->gmm2_arrival, e), producers, a.slot(a.slots->combine_ready, e));
            }
            co_await TWAIT(blk, a.slot(a.slots->combine_ready, e), CmpOp::GE, 1);
            const int g = t.global_expert(a.rank, e);
            for (int src = l; src < s.ranks; src += lanes) {
                co_await combine_rows(blk, a, buf, e, src, 0, t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(g)]);
                // ExpertProgress in the source's window, as published: once the rows of the experts
                // below Unpermute's cut have landed (its phase 1 waits for that), and at the end.
                if (e + 1 == sc.unpermute_cut || e + 1 == s.experts) {
                    release(blk, a.peer_slot(src, a.slots->progress, a.rank), e + 1, NotifyOp::Set);
                }
            }
        }
        pipe_barrier(blk, PIPE_ALL);
        blk.free_tiles_since(mark);
    }
    release(blk, a.slot(a.slots->combine_finished), 1, NotifyOp::AtomicAdd);
    co_await unpermute_phase2(blk, a, sc, v);
}

// ---- stream 5: AIV1 of clusters G1..C-1 ------------------------------------------------------
Task aiv1_high(BlockCtx& blk, Rank ap, ExpertMajorSchedule sc) {
    const MoeRank& a = *ap;
    const int v = 2 * blk.block_idx() + 1;
    co_await published_front_reorder(blk, a, sc.clusters, v);
    co_await unpermute_phase2(blk, a, sc, v);
}

// The part of cluster blk.block_idx() that runs here: its AIC, its AIV0 or its AIV1.
Task expert_major_part(BlockCtx& blk, Rank a, ExpertMajorSchedule sc, bool ffn_only) {
    const bool low = blk.block_idx() < sc.gmm1_cores;
    if (blk.core_type() == CoreType::AIC) {
        if (low) co_await aic_low(blk, a, sc);
        else co_await aic_high(blk, a, sc);
    } else if (blk.sub_block_idx() == 1 && low) {
        co_await aiv1_low(blk, a, sc, ffn_only);
    } else if (!ffn_only) {
        if (blk.sub_block_idx() == 1) co_await aiv1_high(blk, a, sc);
        else if (low) co_await aiv0_low(blk, a, sc);
        else co_await aiv0_high(blk, a, sc);
    }
}

}  // namespace

ExpertMajorSchedule expert_major_schedule(const MoeShape& s, int clusters) {
    ExpertMajorSchedule sc;
    sc.clusters = clusters;
    sc.gmm1_cores = std::max(1, clusters * 2 / 3);
    sc.swiglu_aivs = sc.gmm1_cores;
    // kCanonicalShapeSchedules: EP 8 and 16 at the published K, N, topK and experts per rank.
    const bool published = (s.ranks == 8 || s.ranks == 16) && s.k == 7168 && s.n == 4096 && s.topk == 8 && s.experts == 16 &&
                           clusters == 24;
    struct Row {
        int m, swiglu, join, combine, cut;
    };
    static constexpr Row kRows[] = {{16, 8, 12, 3, 13},   {32, 16, 13, 0, 13},   {64, 16, 13, 0, 13},   {128, 16, 13, 3, 13},
                                    {512, 16, 13, 0, 13}, {1024, 16, 13, 2, 13}, {2048, 16, 13, 2, 13}};
    for (const Row& r : kRows) {
        if (!published || r.m != s.m) continue;
        sc.swiglu_aivs = r.swiglu;
        sc.join_check = s.ranks == 16 ? 11 : r.join;
        sc.combine_start = r.combine;
        sc.unpermute_cut = r.cut;
        sc.canonical = true;
    }
    // Outside the table: the struct defaults, kept inside this shape's experts.
    sc.full_gmm1_experts = std::min(sc.full_gmm1_experts, s.experts);
    sc.join_check = std::min(sc.join_check, s.experts);
    sc.combine_start = std::min(sc.combine_start, s.experts - 1);
    sc.unpermute_cut = std::min(sc.unpermute_cut, s.experts);
    return sc;
}

KernelLaunch expert_major_kernel(const std::shared_ptr<const MoeRank>& a, const ExpertMajorSchedule& sc, bool ffn_only) {
    return KernelLaunch{ffn_only ? "MoeV1Ffn" : "MoeV1", KernelType::MIX, sc.clusters, [a, sc, ffn_only](BlockCtx& blk) {
                            return expert_major_part(blk, a, sc, ffn_only);
                        }};
}

}  // namespace tandem::kernels::moe
