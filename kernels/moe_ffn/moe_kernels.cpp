// moe_ffn's stage kernels, in tile code (moe_kernels.hpp; README.md in this folder).
#include "kernels/moe_ffn/moe_kernels.hpp"

#include <algorithm>
#include <cstring>

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
void fold(Tile& base, const Tile& v) {
    base.write_end = std::max(base.write_end, v.write_end);
    base.read_end = std::max(base.read_end, v.read_end);
    if (v.write_end >= base.write_end) base.last_writer = v.last_writer;
}

// This block's share [begin, end) of `count` items split contiguously over `blocks`.
std::pair<int, int> share(int count, int block, int blocks) {
    const int per = count / blocks, extra = count % blocks;
    const int begin = block * per + std::min(block, extra);
    return {begin, begin + per + (block < extra ? 1 : 0)};
}

// Release: every store of this block has landed, then one count on the expert's counter.
void publish(BlockCtx& blk, SignalAddr base, int e) {
    pipe_barrier(blk, PIPE_ALL);
    TNOTIFY(blk, counter(base, e), 1, NotifyOp::AtomicAdd);
}

}  // namespace

SignalAddr counter(SignalAddr base, int e) { return SignalAddr{base.rank, base.address + 4LL * e}; }

namespace {

// ---- FrontReorder (AIV): sort of the route keys, per-token quant, packed row per route -------
Task front_reorder(BlockCtx& blk, const MoeRank& a, const StageBlocks& nb) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int R = s.routes(), K = s.k;
    // The sort (Ascend's TSORT32 + TMRGSORT on UB): chunks of at most kSortChunk keys, chunk c on
    // block c mod blocks. Addresses come from the host's routing tables (the same order).
    const int chunk = std::min(R, kSortChunk);
    const int chunks = (R + chunk - 1) / chunk;
    if (b < chunks) {
        Tile& keys = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "sort_keys");
        Tile& idx = blk.alloc_tile(MemKind::UB, 1, chunk, DType::F32, "sort_idx");
        for (int c = b; c < chunks; c += blocks) {
            const int len = std::min(chunk, R - c * chunk);
            Tile kv = view(keys, 1, len), iv = view(idx, 1, len);
            co_await TLOAD(kv, a.keys.sub(0, c * chunk, 1, len));
            sync(blk, PIPE_MTE2, PIPE_V);
            TSORT(kv, iv);
            sync(blk, PIPE_V, PIPE_MTE2);
            fold(keys, kv);
            fold(idx, iv);
        }
    }
    // The count runs over the sorted keys: a scalar loop over R (the published last AIV's).
    if (b == blocks - 1) TSCALAR(blk, R);
    // Per token: bf16 row -> fp32, max|x|, s1 = max/127, q = rint(x * 127/max) to int8, then one
    // packed row (K int8 + s1 replicated 8x) stored per route at its sorted row.
    Tile& xb = blk.alloc_tile(MemKind::UB, 1, K, s.x_dtype, "x_in");
    Tile& xf = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "x_f32");
    Tile& ab = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "x_abs");
    Tile& mx = blk.alloc_tile(MemKind::UB, 1, 1, DType::F32, "x_max");
    Tile& packed = blk.alloc_tile(MemKind::UB, 1, s.packed_row_bytes(), DType::I8, "packed_row");
    const auto [t0, t1] = share(s.m, b, blocks);
    for (int tok = t0; tok < t1; ++tok) {
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
        for (int k = 0; k < s.topk; ++k) {
            const int row = t.sorted_row[sz(a.rank)][sz(tok * s.topk + k)];
            co_await TSTORE(a.packed[sz(a.rank)].sub(row, 0, 1, s.packed_row_bytes()), packed);
        }
        sync(blk, PIPE_MTE3, PIPE_MTE2);
        sync(blk, PIPE_MTE3, PIPE_V);
    }
    // Count-as-flag, in part: block i (i < W, i != r) stores this rank's count row for rank i's
    // experts into rank i's window; the all-rank barrier then says every packed row is complete.
    const int W = s.ranks;
    if (b < W && !(W == 1)) {
        Tile& cnt = blk.alloc_tile(MemKind::UB, 1, 256, DType::I32, "count_row");
        for (int i = b; i < W; i += blocks) {
            if (i == a.rank) continue;
            TSCALAR(blk, s.experts);
            if (blk.functional()) {
                auto* c = cnt.as<std::int32_t>();
                std::fill(c, c + 256, 0);
                for (int e = 0; e < std::min(s.experts, 256); ++e) c[e] = t.count[sz(a.rank)][sz(i * s.experts + e)] + 0x800000;
            }
            sync(blk, PIPE_S, PIPE_MTE3);
            co_await TSTORE(a.count_rows[sz(i)].sub(a.rank, 0, 1, 256), cnt);
            sync(blk, PIPE_MTE3, PIPE_S);
        }
    }
    (void)nb;
    co_await device_barrier(blk, a.after_reorder);
}

// ---- Dispatch (AIV): destination-side pull of the packed rows, expert by expert -------------
Task dispatch(BlockCtx& blk, const MoeRank& a, const StageBlocks&) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int W = s.ranks, P = s.packed_row_bytes();
    Tile* ub[2][2];
    for (int i = 0; i < 2; ++i)
        for (int r = 0; r < 2; ++r) ub[i][r] = &blk.alloc_tile(MemKind::UB, r + 1, P, DType::I8, "dispatch_rows");
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
    int buf = 0;
    int pair = 0;
    for (int e = 0; e < s.experts; ++e) {
        const int g = t.global_expert(a.rank, e);
        for (int j = 0; j < W; ++j, ++pair) {
            if (pair % blocks != b) continue;
            const int src = (a.rank + j) % W;  // own rows first, then the peers in rotated order
            const int rows = t.count[sz(src)][sz(g)];
            const int from = t.first_row[sz(src)][sz(g)];
            const int to = t.recv_row(a.rank, e, src);
            for (int i = 0; i < rows; i += 2) {
                const int n = std::min(2, rows - i);
                Tile& u = *ub[buf][n - 1];
                wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
                co_await TLOAD(u, a.packed[sz(src)].sub(from + i, 0, n, P));
                set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
                wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
                co_await TSTORE(a.recv.sub(to + i, 0, n, P), u);
                set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
                buf = 1 - buf;
            }
        }
        publish(blk, a.dispatched, e);
    }
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
}

// ---- GMM1 / GMM2 (AIC): int8 x int8 -> int32 tiles, fixpipe dequant to fp16 ------------------
struct GemmStage {
    SignalAddr wait_on;
    int wait_count = 0;
    SignalAddr done;
    int k_red = 0;      // GMM1: K; GMM2: N/2
    int n_out = 0;      // GMM1: N; GMM2: K
    bool gmm1 = true;
};

Task grouped_gemm(BlockCtx& blk, const MoeRank& a, GemmStage g) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int step1 = std::min(kStepL1, g.k_red);
    Tile& aL1 = blk.alloc_tile(MemKind::L1, kTileM, step1, DType::I8, "a_l1");
    Tile& bL1 = blk.alloc_tile(MemKind::L1, step1, kTileN, DType::I8, "b_l1");
    Tile& sL1 = blk.alloc_tile(MemKind::L1, 1, kTileN, DType::F32, "scale_l1");
    Tile& a0 = blk.alloc_tile(MemKind::L0A, kTileM, kStepL0, DType::I8, "a_l0");
    Tile& b0 = blk.alloc_tile(MemKind::L0B, kStepL0, kTileN, DType::I8, "b_l0");
    Tile& c0 = blk.alloc_tile(MemKind::L0C, kTileM, kTileN, DType::I32, "acc");
    const int n_tiles = g.n_out / kTileN;
    int start = 0;  // the published rotation: remainder tiles move over the cores expert by expert
    for (int e = 0; e < s.experts; ++e) {
        co_await TWAIT(blk, counter(g.wait_on, e), CmpOp::GE, g.wait_count);
        const int rows = t.recv_rows[sz(a.rank)][sz(e)];
        const int base = t.recv_base[sz(a.rank)][sz(e)];
        const int tiles = ((rows + kTileM - 1) / kTileM) * n_tiles;
        const GmTensor& A = g.gmm1 ? a.recv : a.swiglu_q;
        const GmTensor& B = g.gmm1 ? a.w1[sz(e)] : a.w2[sz(e)];
        const GmTensor& S = g.gmm1 ? a.scale1 : a.scale2;
        const GmTensor& C = g.gmm1 ? a.gmm1_out : a.gmm2_out;
        for (int j = (b - start + blocks) % blocks; j < tiles; j += blocks) {
            const int mt = j / n_tiles, nt = j % n_tiles;
            const int m = std::min(kTileM, rows - mt * kTileM);
            const int r0 = base + mt * kTileM, n0 = nt * kTileN;
            Tile c = view(c0, m, kTileN);
            co_await TLOAD(sL1, S.sub(e, n0, 1, kTileN));
            for (int k0 = 0; k0 < g.k_red; k0 += step1) {
                const int ks = std::min(step1, g.k_red - k0);
                Tile av = view(aL1, m, ks), bv = view(bL1, ks, kTileN);
                co_await TLOAD(av, A.sub(r0, k0, m, ks));
                co_await TLOAD(bv, B.sub(k0, n0, ks, kTileN));
                sync(blk, PIPE_MTE2, PIPE_MTE1);
                for (int kk = 0; kk < ks; kk += kStepL0) {
                    const int kl = std::min(kStepL0, ks - kk);
                    Tile al = view(a0, m, kl), bl = view(b0, kl, kTileN);
                    TEXTRACT(al, av, 0, kk);
                    TEXTRACT(bl, bv, kk, 0);
                    sync(blk, PIPE_MTE1, PIPE_M);
                    if (k0 == 0 && kk == 0) TMATMUL(c, al, bl);
                    else TMATMUL_ACC(c, al, bl);
                    sync(blk, PIPE_M, PIPE_MTE1);
                    fold(a0, al);
                    fold(b0, bl);
                }
                sync(blk, PIPE_MTE1, PIPE_MTE2);
                fold(aL1, av);
                fold(bL1, bv);
            }
            sync(blk, PIPE_M, PIPE_FIX);
            co_await TSTORE_FP(C.sub(r0, n0, m, kTileN), c, sL1);
            sync(blk, PIPE_FIX, PIPE_M);
            sync(blk, PIPE_FIX, PIPE_MTE2);  // the scale tile is reloaded by the next tile
            fold(c0, c);
        }
        start = (start + (tiles % blocks == 0 ? 1 : tiles % blocks)) % blocks;
        publish(blk, g.done, e);
    }
}

// ---- SwiGLU (AIV): h = gmC * s1; y = silu(h[:, :N/2]) * h[:, N/2:]; per-row int8 quant --------
Task swiglu(BlockCtx& blk, const MoeRank& a, const StageBlocks& nb) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int H = s.half_n();
    Tile& g16 = blk.alloc_tile(MemKind::UB, 1, H, DType::F16, "gate_f16");
    Tile& u16 = blk.alloc_tile(MemKind::UB, 1, H, DType::F16, "up_f16");
    Tile& s1t = blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s1");
    Tile& gf = blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "gate");
    Tile& uf = blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "up");
    Tile& tmp = blk.alloc_tile(MemKind::UB, 1, H, DType::F32, "tmp");
    Tile& mx = blk.alloc_tile(MemKind::UB, 1, 1, DType::F32, "y_max");
    Tile& q = blk.alloc_tile(MemKind::UB, 1, H, DType::I8, "y_q");
    Tile& s2t = blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s2");
    const int s1_col = s.packed_row_bytes() / 4 - 8;
    for (int e = 0; e < s.experts; ++e) {
        co_await TWAIT(blk, counter(a.gmm1_done, e), CmpOp::GE, nb.gmm1);
        const int base = t.recv_base[sz(a.rank)][sz(e)];
        const auto [r0, r1] = share(t.recv_rows[sz(a.rank)][sz(e)], b, blocks);
        for (int row = base + r0; row < base + r1; ++row) {
            co_await TLOAD(g16, a.gmm1_out.sub(row, 0, 1, H));
            co_await TLOAD(u16, a.gmm1_out.sub(row, H, 1, H));
            co_await TLOAD(s1t, a.recv_scale.sub(row, s1_col, 1, 8));
            sync(blk, PIPE_MTE2, PIPE_V);
            sync(blk, PIPE_MTE2, PIPE_S);
            float s1 = 0;
            if (blk.functional()) s1 = s1t.as<float>()[0];
            if (a.fault == Fault::DropScale1) s1 = 1.0f;
            TCVT(gf, g16);
            TCVT(uf, u16);
            TMULS(gf, gf, s1);
            TMULS(uf, uf, s1);
            TMULS(tmp, gf, -1.0f);
            TEXP(tmp, tmp);
            TADDS(tmp, tmp, 1.0f);
            TDIV(tmp, gf, tmp);
            TMUL(uf, tmp, uf);  // y
            TABS(tmp, uf);
            TROWMAX(mx, tmp);
            sync(blk, PIPE_V, PIPE_S);
            float s2 = 0, inv = 0;
            if (blk.functional()) {
                const float m = mx.as<float>()[0];
                s2 = m / 127.0f;
                inv = m > 0 ? 127.0f / m : 0.0f;
            }
            TMULS(uf, uf, inv);
            TCVT(q, uf);
            TSCALAR(blk, 8);
            if (blk.functional())
                for (int i = 0; i < 8; ++i) s2t.as<float>()[i] = s2;
            sync(blk, PIPE_V, PIPE_MTE3);
            sync(blk, PIPE_S, PIPE_MTE3);
            co_await TSTORE(a.swiglu_q.sub(row, 0, 1, H), q);
            co_await TSTORE(a.swiglu_s.sub(row, 0, 1, 8), s2t);
            sync(blk, PIPE_MTE3, PIPE_V);
            sync(blk, PIPE_MTE3, PIPE_MTE2);
            sync(blk, PIPE_MTE3, PIPE_S);
        }
        publish(blk, a.swiglu_done, e);
    }
}

// ---- Combine (AIV): x s2, fp16, pushed into the source rank's window ------------------------
Task combine(BlockCtx& blk, const MoeRank& a, const StageBlocks& nb) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int K = s.k, W = s.ranks;
    Tile& o16 = blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "gmm2_row");
    Tile& of = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "row_f32");
    Tile& s2t = blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "s2");
    Tile& c16 = blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "combined_row");
    for (int e = 0; e < s.experts; ++e) {
        co_await TWAIT(blk, counter(a.gmm2_done, e), CmpOp::GE, nb.gmm2);
        const int g = t.global_expert(a.rank, e);
        const int rows = t.recv_rows[sz(a.rank)][sz(e)];
        const int base = t.recv_base[sz(a.rank)][sz(e)];
        for (int i = b; i < rows; i += blocks) {
            // Which source the row came from, and its row there.
            int src = 0, off = i;
            while (off >= t.count[sz(src)][sz(g)]) off -= t.count[sz(src++)][sz(g)];
            const int row = base + i;
            co_await TLOAD(o16, a.gmm2_out.sub(row, 0, 1, K));
            co_await TLOAD(s2t, a.swiglu_s.sub(row, 0, 1, 8));
            sync(blk, PIPE_MTE2, PIPE_V);
            sync(blk, PIPE_MTE2, PIPE_S);
            const float s2 = blk.functional() ? s2t.as<float>()[0] : 0.0f;
            TCVT(of, o16);
            TMULS(of, of, s2);
            TCVT(c16, of);
            sync(blk, PIPE_V, PIPE_MTE3);
            co_await TSTORE(a.combined[sz(src)].sub(t.first_row[sz(src)][sz(g)] + off, 0, 1, K), c16);
            sync(blk, PIPE_MTE3, PIPE_V);
            sync(blk, PIPE_MTE3, PIPE_MTE2);
        }
    }
    (void)W;
    co_await device_barrier(blk, a.after_combine);
}

// ---- Unpermute (AIV): out[t] = fp16(sum_k prob[t,k] * combined[row(t,k)]) ---------------------
Task unpermute(BlockCtx& blk, const MoeRank& a, const StageBlocks&) {
    const RouteTables& t = *a.tables;
    const MoeShape& s = t.shape;
    const int b = blk.block_idx(), blocks = blk.block_num();
    const int K = s.k;
    Tile& v16 = blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "route_row");
    Tile& vf = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "route_f32");
    Tile& acc = blk.alloc_tile(MemKind::UB, 1, K, DType::F32, "sum");
    Tile& o16 = blk.alloc_tile(MemKind::UB, 1, K, DType::F16, "out_row");
    Tile& pr = blk.alloc_tile(MemKind::UB, 1, s.topk, DType::F32, "probs");
    const int last = a.fault == Fault::SkipLastRoute ? s.topk - 1 : s.topk;
    const auto [t0, t1] = share(s.m, b, blocks);
    for (int tok = t0; tok < t1; ++tok) {
        co_await TLOAD(pr, a.probs.sub(tok, 0, 1, s.topk));
        sync(blk, PIPE_MTE2, PIPE_S);
        for (int k = 0; k < last; ++k) {
            const int row = t.sorted_row[sz(a.rank)][sz(tok * s.topk + k)];
            co_await TLOAD(v16, a.combined[sz(a.rank)].sub(row, 0, 1, K));
            sync(blk, PIPE_MTE2, PIPE_V);
            const float p = blk.functional() ? pr.as<float>()[k] : 0.0f;
            TCVT(vf, v16);
            if (k == 0) {
                TMULS(acc, vf, p);
            } else {
                TMULS(vf, vf, p);
                TADD(acc, acc, vf);
            }
            sync(blk, PIPE_V, PIPE_MTE2);
        }
        TCVT(o16, acc);
        sync(blk, PIPE_V, PIPE_MTE3);
        co_await TSTORE(a.out.sub(tok, 0, 1, K), o16);
        sync(blk, PIPE_MTE3, PIPE_V);
        sync(blk, PIPE_MTE3, PIPE_MTE2);
    }
}

using Rank = std::shared_ptr<const MoeRank>;

Task reorder_then_dispatch(BlockCtx& blk, Rank a, StageBlocks nb, bool then_dispatch) {
    co_await front_reorder(blk, *a, nb);
    if (then_dispatch) co_await dispatch(blk, *a, nb);
}
Task run_dispatch(BlockCtx& blk, Rank a, StageBlocks nb) { co_await dispatch(blk, *a, nb); }
Task run_gemm(BlockCtx& blk, Rank a, GemmStage g) { co_await grouped_gemm(blk, *a, g); }
Task run_swiglu(BlockCtx& blk, Rank a, StageBlocks nb) { co_await swiglu(blk, *a, nb); }
Task combine_then_unpermute(BlockCtx& blk, Rank a, StageBlocks nb, bool then_unpermute) {
    co_await combine(blk, *a, nb);
    if (then_unpermute) co_await unpermute(blk, *a, nb);
}
Task run_unpermute(BlockCtx& blk, Rank a, StageBlocks nb) { co_await unpermute(blk, *a, nb); }

}  // namespace

KernelLaunch front_reorder_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_dispatch) {
    return KernelLaunch{then_dispatch ? "MoeReorderDispatch" : "MoeFrontReorder", CoreType::AIV, b.reorder,
                        [a, b, then_dispatch](BlockCtx& blk) { return reorder_then_dispatch(blk, a, b, then_dispatch); }};
}

KernelLaunch dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoeDispatch", CoreType::AIV, b.dispatch, [a, b](BlockCtx& blk) { return run_dispatch(blk, a, b); }};
}

KernelLaunch gmm1_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    const MoeShape& s = a->tables->shape;
    GemmStage g{a->dispatched, b.dispatch, a->gmm1_done, s.k, s.n, true};
    return KernelLaunch{"MoeGmm1", CoreType::AIC, b.gmm1, [a, g](BlockCtx& blk) { return run_gemm(blk, a, g); }};
}

KernelLaunch swiglu_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoeSwiglu", CoreType::AIV, b.swiglu, [a, b](BlockCtx& blk) { return run_swiglu(blk, a, b); }};
}

KernelLaunch gmm2_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    const MoeShape& s = a->tables->shape;
    GemmStage g{a->swiglu_done, b.swiglu, a->gmm2_done, s.half_n(), s.k, false};
    return KernelLaunch{"MoeGmm2", CoreType::AIC, b.gmm2, [a, g](BlockCtx& blk) { return run_gemm(blk, a, g); }};
}

KernelLaunch combine_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_unpermute) {
    return KernelLaunch{then_unpermute ? "MoeCombineUnpermute" : "MoeCombine", CoreType::AIV, b.combine,
                        [a, b, then_unpermute](BlockCtx& blk) { return combine_then_unpermute(blk, a, b, then_unpermute); }};
}

KernelLaunch unpermute_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b) {
    return KernelLaunch{"MoeUnpermute", CoreType::AIV, b.unpermute, [a, b](BlockCtx& blk) { return run_unpermute(blk, a, b); }};
}

}  // namespace tandem::kernels::moe
