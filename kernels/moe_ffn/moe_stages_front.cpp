// moe_ffn's FrontReorder pieces, in tile code (moe_stages.hpp).
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/moe_ffn/stage_tiles.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

using namespace tiles;

namespace {
// The published MultiCore merge streams at most 2040 keys of each run at a time.
constexpr int kMergeChunk = 2040;
}  // namespace

// ---- FrontReorder ----------------------------------------------------------------------------

Task sort_keys(BlockCtx& blk, const MoeRank& a, int first, int n, int rounds, bool to_gm) {
    blk.set_stage(kStageFront);
    const std::size_t mark = blk.tile_mark();
    const int chunk = std::min(n, kSortChunk);
    Tile& keys = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "sort_keys");
    Tile& idx = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "sort_idx");
    for (int c0 = first; c0 < first + n; c0 += chunk) {
        const int len = std::min(chunk, first + n - c0);
        Tile kv = view(keys, 1, len), iv = view(idx, 1, len);
        co_await TLOAD(kv, a.keys.sub(0, c0, 1, len));
        sync(blk, PIPE_MTE2, PIPE_V);
        for (int r = 0; r < rounds; ++r) TSORT(kv, iv);
        if (to_gm) {
            sync(blk, PIPE_V, PIPE_MTE3);
            co_await TSTORE(a.sorted.sub(0, c0, 1, len), kv);
            co_await TSTORE(a.sorted.sub(1, c0, 1, len), iv);
            sync(blk, PIPE_MTE3, PIPE_MTE2);
        } else {
            sync(blk, PIPE_V, PIPE_MTE2);
        }
        fold(keys, kv);
        fold(idx, iv);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task merge_sorted_runs(BlockCtx& blk, const MoeRank& a, int first, int n) {
    blk.set_stage(kStageFront);
    if (n <= 0) co_return;
    const std::size_t mark = blk.tile_mark();
    const int chunk = std::min(n, 4 * kMergeChunk);
    Tile& keys = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "merge_keys");
    Tile& idx = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "merge_idx");
    for (int c0 = first; c0 < first + n; c0 += chunk) {
        const int len = std::min(chunk, first + n - c0);
        Tile kv = view(keys, 1, len), iv = view(idx, 1, len);
        co_await TLOAD(kv, a.sorted.sub(0, c0, 1, len));
        co_await TLOAD(iv, a.sorted.sub(1, c0, 1, len));
        sync(blk, PIPE_MTE2, PIPE_V);
        TMRGSORT(kv, iv);
        sync(blk, PIPE_V, PIPE_MTE3);
        co_await TSTORE(a.sorted.sub(0, c0, 1, len), kv);
        co_await TSTORE(a.sorted.sub(1, c0, 1, len), iv);
        sync(blk, PIPE_MTE3, PIPE_MTE2);
        fold(keys, kv);
        fold(idx, iv);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task quantize_routes(BlockCtx& blk, const MoeRank& a, int r0, int r1) {
    blk.set_stage(kStageFront);
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int K = s.k;
    if (r0 >= r1) co_return;
    const std::size_t mark = blk.tile_mark();
    Tile& xb = blk.alloc_tile(MemKind::UB, 1, K, s.x_dtype, "x_in");
    Tile& xf = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "x_f32");
    Tile& ab = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "x_abs");
    Tile& mx = blk.alloc_tile(MemKind::UB, 1, 1, DType::F32, "x_max");
    Tile& packed = blk.alloc_tile(MemKind::UB, 1, s.packed_row_bytes(), DType::I8, "packed_row");
    for (int tok = r0 / s.topk; tok * s.topk < r1; ++tok) {
        co_await TLOAD(xb, a.x.sub(tok, 0, 1, K));
        sync(blk, PIPE_MTE2, PIPE_V);
        TCVT(xf, xb);
        TABS(ab, xf);
        TROWMAX(mx, ab);
        sync(blk, PIPE_V, PIPE_S);
        float s1 = 0, inv = 0;
        if (blk.functional()) {
            const float m = mx.as<float>()[0];
            s1 = m / 127.0f;
            inv = m > 0 ? 127.0f / m : 0.0f;
        }
        TMULS(xf, xf, inv);
        Tile q = view(packed, 1, K);
        TCVT(q, xf);
        fold(packed, q);
        TSCALAR(blk, 8);  // s1 into the row's last 32 bytes
        if (blk.functional())
            for (int i = 0; i < 8; ++i) std::memcpy(packed.data + K + 4 * i, &s1, 4);
        sync(blk, PIPE_V, PIPE_MTE3);
        for (int k = std::max(0, r0 - tok * s.topk); k < s.topk && tok * s.topk + k < r1; ++k) {
            const int row = t.sorted_row[sz(a.rank)][sz(tok * s.topk + k)];
            co_await TSTORE(a.packed[sz(a.rank)].sub(row, 0, 1, s.packed_row_bytes()), packed);
        }
        sync(blk, PIPE_MTE3, PIPE_MTE2);
        sync(blk, PIPE_MTE3, PIPE_V);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task store_row_index(BlockCtx& blk, const MoeRank& a, int r0, int r1, bool scattered) {
    blk.set_stage(kStageFront);
    const std::vector<std::int32_t>& rows = a.tables->sorted_row[sz(a.rank)];
    if (r0 >= r1) co_return;
    const std::size_t mark = blk.tile_mark();
    constexpr int kChunk = 8192;
    if (scattered) {
        // Sorted rows [r0, r1): row j to its route's word, expandedRowIdx[srcRoute[j]] = j. The
        // words of one 32-byte block belong to routes of one token, which sit in other experts'
        // rows, so several AIVs store into each block at once (disjoint bytes: see the op's
        // README, "The published FrontReorder").
        const std::vector<std::int32_t>& route = a.tables->source_route[sz(a.rank)];
        Tile& one = blk.alloc_tile(MemKind::UB, 1, 8, DType::I32, "row_index");
        for (int j = r0; j < r1; ++j) {
            TSCALAR(blk, 1);
            if (blk.functional()) one.as<std::int32_t>()[0] = j;
            sync(blk, PIPE_S, PIPE_MTE3);
            Tile v = view(one, 1, 1);
            co_await TSTORE(a.row_of_route.sub(0, route[sz(j)], 1, 1), v);
            fold(one, v);
            sync(blk, PIPE_MTE3, PIPE_S);
        }
    } else {
        const int chunk = std::min(r1 - r0, kChunk);
        Tile& buf = blk.alloc_tile(MemKind::UB, 1, chunk, DType::I32, "row_index");
        for (int c0 = r0; c0 < r1; c0 += chunk) {
            const int len = std::min(chunk, r1 - c0);
            Tile v = view(buf, 1, len);
            TSCALAR(blk, len);
            if (blk.functional()) std::copy(rows.begin() + c0, rows.begin() + c0 + len, v.as<std::int32_t>());
            sync(blk, PIPE_S, PIPE_MTE3);
            co_await TSTORE(a.row_of_route.sub(0, c0, 1, len), v);
            fold(buf, v);
            sync(blk, PIPE_MTE3, PIPE_S);
        }
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task store_token_counts(BlockCtx& blk, const MoeRank& a, int j0, int j1, bool atomic) {
    blk.set_stage(kStageFront);
    const RouteTables& t = *a.tables;
    const int G = a.token_counts.cols();
    const std::size_t mark = blk.tile_mark();
    // fp32 counts (exact): the sim's atomic adds take float types.
    Tile& cnt = blk.alloc_tile(MemKind::UB, 1, G, DType::F32, "token_counts");
    TSCALAR(blk, std::max(0, j1 - j0));  // the run count over the sorted experts
    if (blk.functional()) {
        auto* c = cnt.as<float>();
        std::fill(c, c + G, 0.0f);
        for (int g = 0; g < std::min(G, t.shape.global_experts()); ++g) {
            const int f = t.first_row[sz(a.rank)][sz(g)], n = t.count[sz(a.rank)][sz(g)];
            c[g] = static_cast<float>(std::max(0, std::min(j1, f + n) - std::max(j0, f)));
        }
    }
    sync(blk, PIPE_S, PIPE_MTE3);
    co_await TSTORE(a.token_counts, cnt, atomic ? AtomicType::AtomicAdd : AtomicType::None);
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

Task send_count_rows(BlockCtx& blk, const MoeRank& a, Crew c, bool flag) {
    blk.set_stage(kStageFront);
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int W = s.ranks;
    if (c.index >= W || W == 1) co_return;
    const std::size_t mark = blk.tile_mark();
    Tile& cnt = blk.alloc_tile(MemKind::UB, 1, 256, DType::I32, "count_row");
    for (int i = c.index; i < W; i += c.count) {
        if (i == a.rank) continue;
        TSCALAR(blk, s.experts);
        if (blk.functional()) {
            auto* row = cnt.as<std::int32_t>();
            std::fill(row, row + 256, 0);
            for (int e = 0; e < std::min(s.experts, 256); ++e) row[e] = t.count[sz(a.rank)][sz(i * s.experts + e)] + 0x800000;
        }
        sync(blk, PIPE_S, PIPE_MTE3);
        co_await TSTORE(a.count_rows[sz(i)].sub(a.rank, 0, 1, 256), cnt);
        sync(blk, PIPE_MTE3, PIPE_S);
        // The published row is its own flag (a marker in its words); here the row lands, then a
        // word says so.
        if (flag) release(blk, a.peer_slot(i, a.slots->count_landed, a.rank), 1, NotifyOp::Set);
    }
    pipe_barrier(blk, PIPE_ALL);
    blk.free_tiles_since(mark);
}

}  // namespace tandem::kernels::moe
