// moe_ffn's GMM1 and GMM2 pieces (int8 cube, fixpipe dequant), in tile code (moe_stages.hpp).
#include "kernels/common/int_math.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/moe_ffn/stage_tiles.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

using namespace tiles;

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
    // The published K-shuffle: each AIC starts at K tile (block index mod K tiles) and wraps, so
    // that the cores do not all read the same K rows of the weights at once.
    const int k_tiles = ceil_div(g.k_red, step1);
    const int first = blk.block_idx() % k_tiles;
    for (int i = 0; i < k_tiles; ++i) {
        const int k0 = (first + i) % k_tiles * step1;
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
            if (i == 0 && kk == 0) TMATMUL(c, al, bl);
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
    blk.set_stage(g.gmm1 ? kStageGmm1 : kStageGmm2);
    const RouteTables& t = *a.tables;
    const int rows = t.recv_rows[sz(a.rank)][sz(e)];
    const int base = t.recv_base[sz(a.rank)][sz(e)];
    const int n_tiles = g.n_out / kTileN;
    const int m_tiles = ceil_div(rows, kTileM);
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

}  // namespace tandem::kernels::moe
