// moe_ffn's SwiGLU and Unpermute pieces (the vector stages), in tile code (moe_stages.hpp).
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/moe_ffn/stage_tiles.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

using namespace tiles;

namespace {
// The published Unpermute prefetches the metadata of up to 256 tokens at once.
constexpr int kMetaTokens = 256;
}  // namespace

// ---- SwiGLU ----------------------------------------------------------------------------------

SwigluBuffers alloc_swiglu_buffers(BlockCtx& blk, const MoeRank& a) {
    const int H = a.tables->shape.half_n();
    SwigluBuffers b;
    for (int i = 0; i < 2; ++i) {
        b.gate16[i] = &blk.alloc_tile(MemKind::UB, 1, H, DType::F16, "gate_f16");
        b.up16[i] = &blk.alloc_tile(MemKind::UB, 1, H, DType::F16, "up_f16");
        b.s1[i] = &blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s1");
    }
    b.gate = &blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "gate");
    b.up = &blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "up");
    b.tmp = &blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "tmp");
    b.max = &blk.alloc_tile(MemKind::UB, 1, 1, DType::F32, "y_max");
    b.q = &blk.alloc_tile(MemKind::UB, 1, H, DType::I8, "y_q");
    b.s2 = &blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s2");
    return b;
}

Task swiglu_rows(BlockCtx& blk, const MoeRank& a, SwigluBuffers& b, int e, int r0, int r1) {
    blk.set_stage(kStageSwiglu, e);
    const MoeShape& s = a.tables->shape;
    const int H = s.half_n();
    const int s1_col = s.packed_row_bytes() / 4 - 8;
    // Ping-pong: buffer i is loaded (MTE2 -> V and S flags i) and handed back once read (V -> MTE2).
    auto load = [&](int row, int i) -> Task {
        wait_flag(blk, PIPE_V, PIPE_MTE2, i);
        co_await TLOAD(*b.gate16[i], a.gmm1_out.sub(row, 0, 1, H));
        co_await TLOAD(*b.up16[i], a.gmm1_out.sub(row, H, 1, H));
        co_await TLOAD(*b.s1[i], a.recv_scale.sub(row, s1_col, 1, 8));
        set_flag(blk, PIPE_MTE2, PIPE_V, i);
        set_flag(blk, PIPE_MTE2, PIPE_S, i);
    };
    if (r0 >= r1) co_return;
    set_flag(blk, PIPE_V, PIPE_MTE2, 0);
    set_flag(blk, PIPE_V, PIPE_MTE2, 1);
    co_await load(r0, 0);
    for (int row = r0; row < r1; ++row) {
        const int i = (row - r0) % 2;
        if (row + 1 < r1) co_await load(row + 1, 1 - i);  // the next row loads while this one computes
        wait_flag(blk, PIPE_MTE2, PIPE_V, i);
        wait_flag(blk, PIPE_MTE2, PIPE_S, i);
        float s1 = 0;
        if (blk.functional()) s1 = b.s1[i]->as<float>()[0];
        if (a.fault == Fault::DropScale1) s1 = 1.0f;
        TCVT(*b.gate, *b.gate16[i]);
        TCVT(*b.up, *b.up16[i]);
        set_flag(blk, PIPE_V, PIPE_MTE2, i);
        TMULS(*b.gate, *b.gate, s1);
        TMULS(*b.up, *b.up, s1);
        TMULS(*b.tmp, *b.gate, -1.0f);
        TEXP(*b.tmp, *b.tmp);
        TADDS(*b.tmp, *b.tmp, 1.0f);
        TDIV(*b.tmp, *b.gate, *b.tmp);
        TMUL(*b.up, *b.tmp, *b.up);  // y
        TABS(*b.tmp, *b.up);
        TROWMAX(*b.max, *b.tmp);
        sync(blk, PIPE_V, PIPE_S);
        float s2 = 0, inv = 0;
        if (blk.functional()) {
            const float m = b.max->as<float>()[0];
            s2 = m / 127.0f;
            inv = m > 0 ? 127.0f / m : 0.0f;
        }
        TMULS(*b.up, *b.up, inv);
        TCVT(*b.q, *b.up);
        TSCALAR(blk, 8);
        if (blk.functional())
            for (int k = 0; k < 8; ++k) b.s2->as<float>()[k] = s2;
        sync(blk, PIPE_V, PIPE_MTE3);
        sync(blk, PIPE_S, PIPE_MTE3);
        co_await TSTORE(a.swiglu_q.sub(row, 0, 1, H), *b.q);
        co_await TSTORE(a.swiglu_s.sub(row, 0, 1, 8), *b.s2);
        sync(blk, PIPE_MTE3, PIPE_V);
        sync(blk, PIPE_MTE3, PIPE_S);
    }
    wait_flag(blk, PIPE_V, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_V, PIPE_MTE2, 1);
}

// ---- Unpermute -------------------------------------------------------------------------------

bool routes_below_cut(const MoeRank& a, int t, int cut) {
    const MoeShape& s = a.tables->shape;
    const std::vector<std::int32_t>& ex = a.tables->expert[sz(a.rank)];
    for (int k = 0; k < s.topk; ++k)
        if (ex[sz(t * s.topk + k)] % s.experts >= cut) return false;
    return true;
}

UnpermuteBuffers alloc_unpermute_buffers(BlockCtx& blk, const MoeRank& a) {
    const MoeShape& s = a.tables->shape;
    const int w = std::min(s.k, kUnpermuteChunk);
    const int tokens = std::min(s.m, kMetaTokens);
    UnpermuteBuffers b;
    b.probs = &blk.alloc_tile(MemKind::UB, tokens, s.topk, DType::F32, "probs");
    b.rows_idx = &blk.alloc_tile(MemKind::UB, 1, tokens * s.topk, DType::I32, "route_rows");
    for (int i = 0; i < 2; ++i) b.in16[i] = &blk.alloc_tile(MemKind::UB, 1, w, DType::F16, "route_row");
    b.in32 = &blk.alloc_tile(MemKind::UB, 1, w, DType::F32, "route_f32");
    b.sum = &blk.alloc_tile(MemKind::UB, 1, w, DType::F32, "sum");
    b.out16 = &blk.alloc_tile(MemKind::UB, 1, w, DType::F16, "out_row");
    return b;
}

std::int64_t unpermute_ub_bytes(const MoeShape& s) {
    const std::int64_t w = std::min(s.k, kUnpermuteChunk);
    const std::int64_t routes = std::int64_t{std::min(s.m, kMetaTokens)} * s.topk;
    return 2 * local_tile_bytes(routes * 4) + 2 * local_tile_bytes(w * 2) + 2 * local_tile_bytes(w * 4) + local_tile_bytes(w * 2);
}

Task unpermute_tokens(BlockCtx& blk, const MoeRank& a, UnpermuteBuffers& b, int t0, int t1, TokenSet set, int cut) {
    blk.set_stage(kStageUnpermute);
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int K = s.k, W = std::min(K, kUnpermuteChunk);
    const int last = a.fault == Fault::SkipLastRoute ? s.topk - 1 : s.topk;
    set_flag(blk, PIPE_V, PIPE_MTE2, 0);
    set_flag(blk, PIPE_V, PIPE_MTE2, 1);
    for (int m0 = t0; m0 < t1; m0 += kMetaTokens) {
        const int mn = std::min(kMetaTokens, t1 - m0);
        Tile pv = view(*b.probs, mn, s.topk), iv = view(*b.rows_idx, 1, mn * s.topk);
        co_await TLOAD(pv, a.probs.sub(m0, 0, mn, s.topk));
        co_await TLOAD(iv, a.row_of_route.sub(0, m0 * s.topk, 1, mn * s.topk));
        sync(blk, PIPE_MTE2, PIPE_S);
        fold(*b.probs, pv);
        fold(*b.rows_idx, iv);
        for (int tok = m0; tok < m0 + mn; ++tok) {
            if (set != TokenSet::All && routes_below_cut(a, tok, cut) != (set == TokenSet::RoutesBelowCut)) continue;
            TSCALAR(blk, s.topk);  // the filter reads each route's expert
            for (int c0 = 0; c0 < K; c0 += W) {
                const int w = std::min(W, K - c0);
                Tile sum = view(*b.sum, 1, w), in32 = view(*b.in32, 1, w), out16 = view(*b.out16, 1, w);
                for (int k = 0; k < last; ++k) {
                    // Ping-pong: route k+1's chunk loads while route k's is summed.
                    const int i = k % 2;
                    const int row = t.sorted_row[sz(a.rank)][sz(tok * s.topk + k)];
                    Tile in16 = view(*b.in16[i], 1, w);
                    wait_flag(blk, PIPE_V, PIPE_MTE2, i);
                    co_await TLOAD(in16, a.combined[sz(a.rank)].sub(row, c0, 1, w));
                    set_flag(blk, PIPE_MTE2, PIPE_V, i);
                    wait_flag(blk, PIPE_MTE2, PIPE_V, i);
                    const float p = blk.functional() ? b.probs->as<float>()[(tok - m0) * s.topk + k] : 0.0f;
                    if (k == 0) {
                        TCVT(sum, in16);
                        TMULS(sum, sum, p);
                    } else {
                        TCVT(in32, in16);
                        TMULS(in32, in32, p);
                        TADD(sum, sum, in32);
                    }
                    set_flag(blk, PIPE_V, PIPE_MTE2, i);
                    fold(*b.in16[i], in16);
                }
                TCVT(out16, sum);
                sync(blk, PIPE_V, PIPE_MTE3);
                co_await TSTORE(a.out.sub(tok, c0, 1, w), out16);
                sync(blk, PIPE_MTE3, PIPE_V);
                fold(*b.sum, sum);
                fold(*b.in32, in32);
                fold(*b.out16, out16);
            }
        }
        sync(blk, PIPE_S, PIPE_MTE2);  // the metadata buffers are reloaded
    }
    wait_flag(blk, PIPE_V, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_V, PIPE_MTE2, 1);
}

}  // namespace tandem::kernels::moe
