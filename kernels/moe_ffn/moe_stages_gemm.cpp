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

namespace {
// Event ids of the GEMM's token pools (per pipe pair: MTE1 -> MTE2 and M -> MTE1 by stage or
// slot, 0 and 1; FIX -> MTE2 for the scale slot).
constexpr int kScaleFreeEvent = 2;
}  // namespace

GemmBuffers alloc_gemm_buffers(BlockCtx& blk, const GemmStage& g) {
    const int step1 = std::min(kStepL1, g.k_red);
    GemmBuffers b;
    static constexpr const char* kA1[2] = {"a_l1_0", "a_l1_1"}, *kB1[2] = {"b_l1_0", "b_l1_1"};
    static constexpr const char* kA0[2] = {"a_l0_0", "a_l0_1"}, *kB0[2] = {"b_l0_0", "b_l0_1"};
    for (int s = 0; s < 2; ++s) {
        b.a_l1[s] = &blk.alloc_tile(MemKind::L1, kTileM, step1, DType::I8, kA1[s]);
        b.b_l1[s] = &blk.alloc_tile(MemKind::L1, step1, kTileN, DType::I8, kB1[s]);
        b.a_l0[s] = &blk.alloc_tile(MemKind::L0A, kTileM, kStepL0, DType::I8, kA0[s]);
        b.b_l0[s] = &blk.alloc_tile(MemKind::L0B, kStepL0, kTileN, DType::I8, kB0[s]);
    }
    b.scale_l1 = &blk.alloc_tile(MemKind::L1, 1, kTileN, DType::F32, "scale_l1");
    b.acc = &blk.alloc_tile(MemKind::L0C, kTileM, kTileN, DType::I32, "acc");
    // Every stage, slot and the scale slot start free.
    for (int s = 0; s < 2; ++s) {
        set_flag(blk, PIPE_MTE1, PIPE_MTE2, s);
        set_flag(blk, PIPE_M, PIPE_MTE1, s);
    }
    set_flag(blk, PIPE_FIX, PIPE_MTE2, kScaleFreeEvent);
    return b;
}

void drain_gemm_buffers(BlockCtx& blk, GemmBuffers& buf) {
    for (int s = 0; s < 2; ++s) {
        wait_flag(blk, PIPE_MTE1, PIPE_MTE2, s);
        wait_flag(blk, PIPE_M, PIPE_MTE1, s);
    }
    wait_flag(blk, PIPE_FIX, PIPE_MTE2, kScaleFreeEvent);
    buf = GemmBuffers{};
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

// One output tile: rows [r0, r0 + m) of the expert's A, columns [n0, n0 + w) of its B. The
// published preload: a K step's loads go to the free L1 stage while the previous step's extracts
// and matmuls run, each extract to the free L0 slot while the previous slot's matmul runs (MTE2 ->
// MTE1 -> M flags by stage and slot, their releases back); the single L0C makes the tile's first
// matmul wait for the previous tile's store. The scale comes after the K loop's loads.
Task gemm_tile(BlockCtx& blk, const MoeRank& a, const GemmStage& g, GemmBuffers& buf, int e, int r0, int m, int n0, int w) {
    const GmTensor& A = g.gmm1 ? a.recv : a.swiglu_q;
    const GmTensor& B = g.gmm1 ? a.w1[sz(e)] : a.w2[sz(e)];
    const GmTensor& S = g.gmm1 ? a.scale1 : a.scale2;
    const GmTensor& C = g.gmm1 ? a.gmm1_out : a.gmm2_out;
    const int step1 = std::min(kStepL1, g.k_red);
    Tile c = view(*buf.acc, m, w);
    // The published K-shuffle: each AIC starts at K tile (block index mod K tiles) and wraps, so
    // that the cores do not all read the same K rows of the weights at once.
    const int k_tiles = ceil_div(g.k_red, step1);
    const int first = blk.block_idx() % k_tiles;
    for (int i = 0; i < k_tiles; ++i) {
        const int k0 = (first + i) % k_tiles * step1;
        const int ks = std::min(step1, g.k_red - k0);
        const int st = buf.l1_stage;
        buf.l1_stage ^= 1;
        wait_flag(blk, PIPE_MTE1, PIPE_MTE2, st);  // the stage's last extracts are done
        Tile av = view(*buf.a_l1[st], m, ks), bv = view(*buf.b_l1[st], ks, w);
        co_await TLOAD(av, A.sub(r0, k0, m, ks));
        co_await TLOAD(bv, B.sub(k0, n0, ks, w));
        set_flag(blk, PIPE_MTE2, PIPE_MTE1, st);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE1, st);
        for (int kk = 0; kk < ks; kk += kStepL0) {
            const int kl = std::min(kStepL0, ks - kk);
            const int sl = buf.l0_slot;
            buf.l0_slot ^= 1;
            wait_flag(blk, PIPE_M, PIPE_MTE1, sl);  // the slot's last matmul is done
            Tile al = view(*buf.a_l0[sl], m, kl), bl = view(*buf.b_l0[sl], kl, w);
            TEXTRACT(al, av, 0, kk);
            TEXTRACT(bl, bv, kk, 0);
            set_flag(blk, PIPE_MTE1, PIPE_M, sl);
            wait_flag(blk, PIPE_MTE1, PIPE_M, sl);
            if (i == 0 && kk == 0) TMATMUL(c, al, bl);
            else TMATMUL_ACC(c, al, bl);
            set_flag(blk, PIPE_M, PIPE_MTE1, sl);
            fold(*buf.a_l0[sl], al);
            fold(*buf.b_l0[sl], bl);
        }
        set_flag(blk, PIPE_MTE1, PIPE_MTE2, st);  // the stage is free for the step after next
        fold(*buf.a_l1[st], av);
        fold(*buf.b_l1[st], bv);
    }
    Tile sv = view(*buf.scale_l1, 1, w);
    wait_flag(blk, PIPE_FIX, PIPE_MTE2, kScaleFreeEvent);  // the previous tile's store has read it
    co_await TLOAD(sv, S.sub(e, n0, 1, w));
    sync(blk, PIPE_MTE2, PIPE_FIX);
    sync(blk, PIPE_M, PIPE_FIX);
    co_await TSTORE_FP(C.sub(r0, n0, m, w), c, sv);
    set_flag(blk, PIPE_FIX, PIPE_MTE2, kScaleFreeEvent);
    sync(blk, PIPE_FIX, PIPE_M);  // the single L0C: the next tile's first matmul waits for the store
    fold(*buf.acc, c);
    fold(*buf.scale_l1, sv);
}

}  // namespace

Task gemm_expert(BlockCtx& blk, const MoeRank& a, const GemmStage& g, GemmBuffers& buf, int e, Crew c, int& rotation,
                 bool n_split) {
    blk.set_stage(g.gmm1 ? kStageGmm1 : kStageGmm2, e);
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
