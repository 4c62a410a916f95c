// moe_ffn's Dispatch and Combine pieces (rows between ranks), in tile code (moe_stages.hpp).
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/moe_ffn/stage_tiles.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

using namespace tiles;

// ---- Dispatch ------------------------------------------------------------------------------

PullBuffers alloc_pull_buffers(BlockCtx& blk, const MoeRank& a) {
    PullBuffers p;
    const int P = a.tables->shape.packed_row_bytes();
    for (int i = 0; i < 2; ++i)
        for (int r = 0; r < 2; ++r) p.rows[i][r] = &blk.alloc_tile(MemKind::UB, r + 1, P, DType::I8, "dispatch_rows");
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
    return p;
}

namespace {
// n (1 or 2) rows from `from` to `to` through the next of the two buffers, in ping-pong: MTE2
// in, MTE3 out (a pull's rows, a push's, the inbox's copy-out).
Task move_rows(BlockCtx& blk, PullBuffers& p, const GmTensor& from, int from_row, const GmTensor& to, int to_row, int n, int P) {
    const int buf = p.next;
    Tile& u = *p.rows[buf][n - 1];
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
    co_await TLOAD(u, from.sub(from_row, 0, n, P));
    set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
    wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
    co_await TSTORE(to.sub(to_row, 0, n, P), u);
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
    p.next = 1 - buf;
}
}  // namespace

Task pull_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int e, int src, bool split_scale) {
    blk.set_stage(kStageDispatch, e);
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int P = s.packed_row_bytes(), K = s.k;
    const int g = t.global_expert(a.rank, e);
    const int count = t.count[sz(src)][sz(g)];
    const int rows = a.fault == Fault::DropLastPulledRow ? std::max(0, count - 1) : count;
    const int from = t.first_row[sz(src)][sz(g)];
    const int to = t.recv_row(a.rank, e, src);
    for (int i = 0; i < rows; i += 2) {
        const int n = std::min(2, rows - i);
        if (!split_scale) {
            co_await move_rows(blk, p, a.packed[sz(src)], from + i, a.recv, to + i, n, P);
            continue;
        }
        const int buf = p.next;
        Tile& u = *p.rows[buf][n - 1];
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        co_await TLOAD(u, a.packed[sz(src)].sub(from + i, 0, n, P));
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        // Per row, the int8 part to gmA and the scale to perTokenScale1 (here: the row's tail in
        // the same buffer), each its own store.
        for (int r = 0; r < n; ++r) {
            Tile q = part(u, r, 1, 0, K), sc = part(u, r, 1, K, 32);
            co_await TSTORE(a.recv.sub(to + i + r, 0, 1, K), q);
            co_await TSTORE(a.recv.sub(to + i + r, K, 1, 32), sc);
            fold(u, q);
            fold(u, sc);
        }
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        p.next = 1 - buf;
    }
}


Task push_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int j0, int j1) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int P = s.packed_row_bytes();
    const auto me = sz(a.rank);
    // The rank's sorted rows are its routes' runs, one per global expert in the order sorted.
    for (int g = 0; g < s.global_experts(); ++g) {
        const int first = t.first_row[me][sz(g)], count = t.count[me][sz(g)];
        const int rows = a.fault == Fault::DropLastPulledRow ? std::max(0, count - 1) : count;
        const int i0 = std::max(j0, first) - first, i1 = std::min(j1, first + rows) - first;
        if (i1 <= i0) continue;
        const int dst = g / s.experts, e = g % s.experts;
        blk.set_stage(kStageDispatch, e);
        const int to = t.recv_row(dst, e, a.rank);
        for (int i = i0; i < i1; i += 2)
            co_await move_rows(blk, p, a.packed[me], first + i, a.inbox[sz(dst)], to + i, std::min(2, i1 - i), P);
    }
}

Task copy_inbox_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int r0, int r1) {
    blk.set_stage(kStageDispatch, 0);
    const int P = a.tables->shape.packed_row_bytes();
    for (int r = r0; r < r1; r += 2) co_await move_rows(blk, p, a.inbox[sz(a.rank)], r, a.recv, r, std::min(2, r1 - r), P);
}

void drain_pull_buffers(BlockCtx& blk) {
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
}

// ---- Combine ---------------------------------------------------------------------------------

CombineBuffers alloc_combine_buffers(BlockCtx& blk, const MoeRank& a) {
    const int K = a.tables->shape.k;
    CombineBuffers b;
    for (int i = 0; i < 2; ++i) {
        b.row16[i] = &blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "gmm2_row");
        b.s2[i] = &blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s2");
        b.out16[i] = &blk.alloc_tile(MemKind::UB, 1, K, DType::F16, i == 0 ? "combined_row_0" : "combined_row_1");
    }
    b.row32 = &blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "row_f32");
    return b;
}

std::int64_t combine_ub_bytes(const MoeShape& s) {
    const std::int64_t K = s.k;
    return 2 * (local_tile_bytes(K * 2) + local_tile_bytes(8 * 4) + local_tile_bytes(K * 2)) + local_tile_bytes(K * 4);
}

Task combine_rows(BlockCtx& blk, const MoeRank& a, CombineBuffers& b, int e, int src, int i0, int i1) {
    blk.set_stage(kStageCombine, e);
    const RouteTables& t = *a.tables;
    const int K = t.shape.k;
    const int g = t.global_expert(a.rank, e);
    const int from = t.recv_row(a.rank, e, src);
    const int to = t.first_row[sz(src)][sz(g)];
    // Ping-pong as swiglu_rows', on the way in and on the way out (the published "per row,
    // double-buffered").
    auto load = [&](int i, int k) -> Task {
        wait_flag(blk, PIPE_V, PIPE_MTE2, k);
        co_await TLOAD(*b.row16[k], a.gmm2_out.sub(from + i, 0, 1, K));
        co_await TLOAD(*b.s2[k], a.swiglu_s.sub(from + i, 0, 1, 8));
        set_flag(blk, PIPE_MTE2, PIPE_V, k);
        set_flag(blk, PIPE_MTE2, PIPE_S, k);
    };
    if (i0 >= i1) co_return;
    for (int k = 0; k < 2; ++k) {
        set_flag(blk, PIPE_V, PIPE_MTE2, k);
        set_flag(blk, PIPE_MTE3, PIPE_V, k);
    }
    co_await load(i0, 0);
    for (int i = i0; i < i1; ++i) {
        const int k = (i - i0) % 2;
        if (i + 1 < i1) co_await load(i + 1, 1 - k);
        wait_flag(blk, PIPE_MTE2, PIPE_V, k);
        wait_flag(blk, PIPE_MTE2, PIPE_S, k);
        const float s2 = blk.functional() ? b.s2[k]->as<float>()[0] : 0.0f;
        TCVT(*b.row32, *b.row16[k]);
        set_flag(blk, PIPE_V, PIPE_MTE2, k);
        TMULS(*b.row32, *b.row32, s2);
        wait_flag(blk, PIPE_MTE3, PIPE_V, k);  // the store two rows back has read out16[k]
        TCVT(*b.out16[k], *b.row32);
        sync(blk, PIPE_V, PIPE_MTE3);
        co_await TSTORE(a.combined[sz(src)].sub(to + i, 0, 1, K), *b.out16[k]);
        set_flag(blk, PIPE_MTE3, PIPE_V, k);
    }
    for (int k = 0; k < 2; ++k) {
        wait_flag(blk, PIPE_V, PIPE_MTE2, k);
        wait_flag(blk, PIPE_MTE3, PIPE_V, k);
    }
}

SubtileBuffers alloc_subtile_buffers(BlockCtx& blk) {
    SubtileBuffers b;
    b.in16 = &blk.alloc_tile(MemKind::UB, kSubtileRows, kTileN, DType::F16, "subtile_f16");
    b.s2 = &blk.alloc_tile(MemKind::UB, kSubtileRows, 1, DType::F32, "subtile_s2");
    b.f32 = &blk.alloc_tile(MemKind::UB, kSubtileRows, kTileN, DType::F32, "subtile_f32");
    b.out16 = &blk.alloc_tile(MemKind::UB, kSubtileRows, kTileN, DType::F16, "subtile_out");
    return b;
}

Task combine_subtile(BlockCtx& blk, const MoeRank& a, SubtileBuffers& b, int e, int r0, int rows, int c0) {
    blk.set_stage(kStageCombine, e);
    const RouteTables& t = *a.tables;
    const int base = t.recv_base[sz(a.rank)][sz(e)];
    const int g = t.global_expert(a.rank, e);
    Tile in16 = view(*b.in16, rows, kTileN), s2 = view(*b.s2, rows, 1), f32 = view(*b.f32, rows, kTileN),
         out16 = view(*b.out16, rows, kTileN);
    co_await TLOAD(in16, a.gmm2_out.sub(base + r0, c0, rows, kTileN));
    co_await TLOAD(s2, a.swiglu_s.sub(base + r0, 0, rows, 1));
    sync(blk, PIPE_MTE2, PIPE_V);
    TCVT(f32, in16);
    TROWEXPANDMUL(f32, f32, s2);
    TCVT(out16, f32);
    sync(blk, PIPE_V, PIPE_MTE3);
    // The sub-tile's rows, source by source (the expert's rows are in source order).
    for (int src = 0, first = 0; src < t.shape.ranks && first < r0 + rows; ++src) {
        const int n = t.count[sz(src)][sz(g)];
        const int i0 = std::max(r0, first), i1 = std::min(r0 + rows, first + n);
        if (i1 > i0) {
            Tile part_rows = part(out16, i0 - r0, i1 - i0, 0, kTileN);
            co_await TSTORE(a.combined[sz(src)].sub(t.first_row[sz(src)][sz(g)] + (i0 - first), c0, i1 - i0, kTileN), part_rows);
            fold(out16, part_rows);
        }
        first += n;
    }
    sync(blk, PIPE_MTE3, PIPE_V);
    sync(blk, PIPE_MTE3, PIPE_MTE2);
    fold(*b.in16, in16);
    fold(*b.s2, s2);
    fold(*b.f32, f32);
    fold(*b.out16, out16);
}

}  // namespace tandem::kernels::moe
