// moe_ffn's stage work in pieces, in tile code (moe_stages.hpp; README.md in this folder).
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>
#include <cstring>

#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

namespace {

std::size_t sz(int v) { return static_cast<std::size_t>(v); }

// Orders pipe `a`'s work before pipe `b`'s next instruction (set_flag + wait_flag).
void sync(BlockCtx& blk, Pipe a, Pipe b) {
    set_flag(blk, a, b, 0);
    wait_flag(blk, a, b, 0);
}

// A tile standing for the first `rows` rows and `cols` columns of `base` (row-major; a prefix of
// its storage when cols == base.cols or rows == 1). fold() hands its hazard times back.
Tile view(const Tile& base, int rows, int cols) {
    Tile v = base;
    v.rows = rows;
    v.cols = cols;
    return v;
}
// Columns [c0, c0 + cols) of row r of `base`, as a one-row tile.
Tile part(const Tile& base, int r, int c0, int cols) {
    Tile v = base;
    const std::int64_t skip = (std::int64_t{r} * base.cols + c0) * dtype_bytes(base.dtype);
    v.rows = 1;
    v.cols = cols;
    v.offset_bytes += skip;
    if (v.data != nullptr) v.data += skip;
    return v;
}
void fold(Tile& base, const Tile& v) {
    base.write_end = std::max(base.write_end, v.write_end);
    base.read_end = std::max(base.read_end, v.read_end);
    if (v.write_end >= base.write_end) base.last_writer = v.last_writer;
}

// The published Unpermute prefetches the metadata of up to 256 tokens at once.
constexpr int kMetaTokens = 256;
// The published MultiCore merge streams at most 2040 keys of each run at a time.
constexpr int kMergeChunk = 2040;

}  // namespace

std::pair<int, int> share(int items, Crew c) {
    const int per = items / c.count, extra = items % c.count;
    const int begin = c.index * per + std::min(c.index, extra);
    return {begin, begin + per + (c.index < extra ? 1 : 0)};
}

void release(BlockCtx& blk, SignalAddr sig, int value, NotifyOp op) {
    pipe_barrier(blk, PIPE_ALL);
    TNOTIFY(blk, sig, value, op);
}

Task syncall(BlockCtx& blk) {
    pipe_barrier(blk, PIPE_ALL);
    CrossCoreSetFlag(blk, 0, PIPE_S, kSyncAllFlag);
    co_await CrossCoreWaitFlag(blk, kSyncAllFlag);
}

// ---- FrontReorder ----------------------------------------------------------------------------

Task sort_keys(BlockCtx& blk, const MoeRank& a, int first, int n, int rounds, bool to_gm) {
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
    const std::vector<std::int32_t>& rows = a.tables->sorted_row[sz(a.rank)];
    if (r0 >= r1) co_return;
    const std::size_t mark = blk.tile_mark();
    constexpr int kChunk = 8192;
    if (scattered) {
        Tile& one = blk.alloc_tile(MemKind::UB, 1, 8, DType::I32, "row_index");
        for (int r = r0; r < r1; ++r) {
            TSCALAR(blk, 1);
            if (blk.functional()) one.as<std::int32_t>()[0] = rows[sz(r)];
            sync(blk, PIPE_S, PIPE_MTE3);
            Tile v = view(one, 1, 1);
            co_await TSTORE(a.row_of_route.sub(0, r, 1, 1), v);
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

Task pull_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int e, int src, bool split_scale) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int P = s.packed_row_bytes(), K = s.k;
    const int g = t.global_expert(a.rank, e);
    const int rows = t.count[sz(src)][sz(g)];
    const int from = t.first_row[sz(src)][sz(g)];
    const int to = t.recv_row(a.rank, e, src);
    for (int i = 0; i < rows; i += 2) {
        const int n = std::min(2, rows - i);
        const int buf = p.next;
        Tile& u = *p.rows[buf][n - 1];
        wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        co_await TLOAD(u, a.packed[sz(src)].sub(from + i, 0, n, P));
        set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
        if (split_scale) {
            // Per row, the int8 part to gmA and the scale to perTokenScale1 (here: the row's tail
            // in the same buffer), each its own store.
            for (int r = 0; r < n; ++r) {
                Tile q = part(u, r, 0, K), sc = part(u, r, K, 32);
                co_await TSTORE(a.recv.sub(to + i + r, 0, 1, K), q);
                co_await TSTORE(a.recv.sub(to + i + r, K, 1, 32), sc);
                fold(u, q);
                fold(u, sc);
            }
        } else {
            co_await TSTORE(a.recv.sub(to + i, 0, n, P), u);
        }
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
        p.next = 1 - buf;
    }
}

void drain_pull_buffers(BlockCtx& blk) {
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
}

// ---- GMM1 / GMM2 -----------------------------------------------------------------------------

GemmStage gmm1_stage(const MoeShape& s) { return GemmStage{true, s.k, s.n}; }
GemmStage gmm2_stage(const MoeShape& s) { return GemmStage{false, s.half_n(), s.k}; }

GemmBuffers alloc_gemm_buffers(BlockCtx& blk, const GemmStage& g) {
    const int step1 = std::min(kStepL1, g.k_red);
    GemmBuffers b;
    b.a_l1 = &blk.alloc_tile(MemKind::L1, kTileM, step1, DType::I8, "a_l1");
    b.b_l1 = &blk.alloc_tile(MemKind::L1, step1, kTileN, DType::I8, "b_l1");
    b.scale_l1 = &blk.alloc_tile(MemKind::L1, 1, kTileN, DType::F32, "scale_l1");
    b.a_l0 = &blk.alloc_tile(MemKind::L0A, kTileM, kStepL0, DType::I8, "a_l0");
    b.b_l0 = &blk.alloc_tile(MemKind::L0B, kStepL0, kTileN, DType::I8, "b_l0");
    b.acc = &blk.alloc_tile(MemKind::L0C, kTileM, kTileN, DType::I32, "acc");
    return b;
}

std::pair<int, int> tile_coord(int j, int m_tiles, int n_tiles) {
    constexpr int kSwizzleCols = 9;
    const int per_block = kSwizzleCols * m_tiles;
    const int block = j / per_block, in_block = j % per_block;
    const int cols = std::min(kSwizzleCols, n_tiles - block * kSwizzleCols);
    int mt = in_block / cols;
    const int nt = block * kSwizzleCols + in_block % cols;
    if (block % 2 == 1) mt = m_tiles - 1 - mt;
    return {mt, nt};
}

namespace {

// One output tile: rows [r0, r0 + m) of the expert's A, columns [n0, n0 + w) of its B.
Task gemm_tile(BlockCtx& blk, const MoeRank& a, const GemmStage& g, GemmBuffers& buf, int e, int r0, int m, int n0, int w) {
    const GmTensor& A = g.gmm1 ? a.recv : a.swiglu_q;
    const GmTensor& B = g.gmm1 ? a.w1[sz(e)] : a.w2[sz(e)];
    const GmTensor& S = g.gmm1 ? a.scale1 : a.scale2;
    const GmTensor& C = g.gmm1 ? a.gmm1_out : a.gmm2_out;
    const int step1 = std::min(kStepL1, g.k_red);
    Tile c = view(*buf.acc, m, w);
    Tile sv = view(*buf.scale_l1, 1, w);
    co_await TLOAD(sv, S.sub(e, n0, 1, w));
    for (int k0 = 0; k0 < g.k_red; k0 += step1) {
        const int ks = std::min(step1, g.k_red - k0);
        Tile av = view(*buf.a_l1, m, ks), bv = view(*buf.b_l1, ks, w);
        co_await TLOAD(av, A.sub(r0, k0, m, ks));
        co_await TLOAD(bv, B.sub(k0, n0, ks, w));
        sync(blk, PIPE_MTE2, PIPE_MTE1);
        for (int kk = 0; kk < ks; kk += kStepL0) {
            const int kl = std::min(kStepL0, ks - kk);
            Tile al = view(*buf.a_l0, m, kl), bl = view(*buf.b_l0, kl, w);
            TEXTRACT(al, av, 0, kk);
            TEXTRACT(bl, bv, kk, 0);
            sync(blk, PIPE_MTE1, PIPE_M);
            if (k0 == 0 && kk == 0) TMATMUL(c, al, bl);
            else TMATMUL_ACC(c, al, bl);
            sync(blk, PIPE_M, PIPE_MTE1);
            fold(*buf.a_l0, al);
            fold(*buf.b_l0, bl);
        }
        sync(blk, PIPE_MTE1, PIPE_MTE2);
        fold(*buf.a_l1, av);
        fold(*buf.b_l1, bv);
    }
    sync(blk, PIPE_M, PIPE_FIX);
    co_await TSTORE_FP(C.sub(r0, n0, m, w), c, sv);
    sync(blk, PIPE_FIX, PIPE_M);
    sync(blk, PIPE_FIX, PIPE_MTE2);  // the scale tile is reloaded by the next tile
    fold(*buf.acc, c);
    fold(*buf.scale_l1, sv);
}

}  // namespace

Task gemm_expert(BlockCtx& blk, const MoeRank& a, const GemmStage& g, GemmBuffers& buf, int e, Crew c, int& rotation,
                 bool n_split) {
    const RouteTables& t = *a.tables;
    const int rows = t.recv_rows[sz(a.rank)][sz(e)];
    const int base = t.recv_base[sz(a.rank)][sz(e)];
    const int n_tiles = g.n_out / kTileN;
    const int m_tiles = (rows + kTileM - 1) / kTileM;
    const int tiles = m_tiles * n_tiles;
    if (n_split && m_tiles == 1 && n_tiles < c.count) {
        // 32-column units dealt over the cores, the first (units mod cores) one more.
        constexpr int kUnit = 32;
        const auto [u0, u1] = share(g.n_out / kUnit, c);
        if (u1 > u0) co_await gemm_tile(blk, a, g, buf, e, base, rows, u0 * kUnit, (u1 - u0) * kUnit);
        co_return;
    }
    for (int j = (c.index - rotation % c.count + c.count) % c.count; j < tiles; j += c.count) {
        const auto [mt, nt] = tile_coord(j, m_tiles, n_tiles);
        co_await gemm_tile(blk, a, g, buf, e, base + mt * kTileM, std::min(kTileM, rows - mt * kTileM), nt * kTileN, kTileN);
    }
    rotation = (rotation + (tiles % c.count == 0 ? 1 : tiles % c.count)) % c.count;
}

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

Task swiglu_rows(BlockCtx& blk, const MoeRank& a, SwigluBuffers& b, int r0, int r1) {
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

// ---- Combine ---------------------------------------------------------------------------------

CombineBuffers alloc_combine_buffers(BlockCtx& blk, const MoeRank& a) {
    const int K = a.tables->shape.k;
    CombineBuffers b;
    for (int i = 0; i < 2; ++i) {
        b.row16[i] = &blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "gmm2_row");
        b.s2[i] = &blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s2");
    }
    b.row32 = &blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "row_f32");
    b.out16 = &blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "combined_row");
    return b;
}

Task combine_rows(BlockCtx& blk, const MoeRank& a, CombineBuffers& b, int e, int src, int i0, int i1) {
    const RouteTables& t = *a.tables;
    const int K = t.shape.k;
    const int g = t.global_expert(a.rank, e);
    const int from = t.recv_row(a.rank, e, src);
    const int to = t.first_row[sz(src)][sz(g)];
    // Ping-pong as swiglu_rows'.
    auto load = [&](int i, int k) -> Task {
        wait_flag(blk, PIPE_V, PIPE_MTE2, k);
        co_await TLOAD(*b.row16[k], a.gmm2_out.sub(from + i, 0, 1, K));
        co_await TLOAD(*b.s2[k], a.swiglu_s.sub(from + i, 0, 1, 8));
        set_flag(blk, PIPE_MTE2, PIPE_V, k);
        set_flag(blk, PIPE_MTE2, PIPE_S, k);
    };
    if (i0 >= i1) co_return;
    set_flag(blk, PIPE_V, PIPE_MTE2, 0);
    set_flag(blk, PIPE_V, PIPE_MTE2, 1);
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
        TCVT(*b.out16, *b.row32);
        sync(blk, PIPE_V, PIPE_MTE3);
        co_await TSTORE(a.combined[sz(src)].sub(to + i, 0, 1, K), *b.out16);
        sync(blk, PIPE_MTE3, PIPE_V);
    }
    wait_flag(blk, PIPE_V, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_V, PIPE_MTE2, 1);
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
            Tile part_rows = out16;
            const std::int64_t skip = std::int64_t{i0 - r0} * kTileN * 2;
            part_rows.rows = i1 - i0;
            part_rows.offset_bytes += skip;
            if (part_rows.data != nullptr) part_rows.data += skip;
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

Task unpermute_tokens(BlockCtx& blk, const MoeRank& a, UnpermuteBuffers& b, int t0, int t1, TokenSet set, int cut) {
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
