#pragma once
// moe_ffn's stage work, in pieces every schedule composes (README.md "The stages"): one worker's
// share of one stage for one expert (or one token range). The schedules (moe_kernels.cpp: bulk
// and per_expert; expert_major.cpp: the published V1; baseline.cpp: the published baseline) say
// which cores run which pieces, in what order, and how they hand experts on. Each piece's
// buffers are allocated once per core (alloc_*) and passed in.
#include <string>
#include <utility>
#include <vector>

#include "kernels/moe_ffn/moe_rank.hpp"
#include "sim/core/tile.hpp"
#include "sim/exec/task.hpp"

namespace tandem {
class BlockCtx;
}

namespace tandem::kernels::moe {

// The stages, as the kernels mark them (BlockCtx::set_stage) and the results and trace name them
// (moe_stage_names): each piece below sets its stage, so a core's instructions count for the
// stage of the piece that issued them.
enum MoeStage : int { kStageFront, kStageDispatch, kStageGmm1, kStageSwiglu, kStageGmm2, kStageCombine, kStageUnpermute };
inline std::vector<std::string> moe_stage_names() {
    return {"front", "dispatch", "gmm1", "swiglu", "gmm2", "combine", "unpermute"};
}

// One worker of a stage: its index among the stage's `count` workers.
struct Crew {
    int index = 0;
    int count = 1;
};
// The worker's contiguous share [begin, end) of `items` (the first items % count get one more).
std::pair<int, int> share(int items, Crew c);

// The published slot protocol's drain: every store of this core has landed (pipe_barrier(PIPE_ALL))
// and its remote ones are acknowledged (dsb), then the signal is set or added to.
void release(BlockCtx& blk, SignalAddr sig, int value, NotifyOp op);
// SYNCALL<AIVOnly> or <AICOnly>: every core of this core's type in the launch (FFTS mode 0 on
// flag kSyncAllFlag), once its own pipes have drained.
inline constexpr int kSyncAllFlag = 15;
Task syncall(BlockCtx& blk);

// ---- FrontReorder (AIV) -------------------------------------------------------------------
// Sorts route keys [first, first + n) in UB, in chunks of at most kSortChunk, `rounds` times (the
// FullLoad path sorts twice: by expert, then by route for the inverse). With `to_gm` the sorted
// keys and routes are stored to a.sorted (OneCore, and each MultiCore run).
Task sort_keys(BlockCtx& blk, const MoeRank& a, int first, int n, int rounds, bool to_gm);
// MultiCore's merge of at most four sorted runs of a.sorted, keys [first, first + n), on one
// core: streamed in chunks of 2040 keys per run, TMRGSORT, stored back.
Task merge_sorted_runs(BlockCtx& blk, const MoeRank& a, int first, int n);
// For each token with routes in [r0, r1): its bf16 row quantised once to int8 (s1 = max|x|/127),
// then the packed row (K int8 + s1 x 8) stored for each of its routes in range, at the route's
// sorted row of the rank's own window.
Task quantize_routes(BlockCtx& blk, const MoeRank& a, int r0, int r1);
// expandedRowIdx: routes [r0, r1)'s sorted rows stored to a.row_of_route in one store or, with
// `scattered` (the OneCore/MultiCore inverse step), sorted rows [r0, r1) each stored to its
// route's word, one 4-byte element per store.
Task store_row_index(BlockCtx& blk, const MoeRank& a, int r0, int r1, bool scattered);
// The runs of sorted rows [j0, j1) counted per global expert (a scalar loop over them), then
// stored to a.token_counts, or added to it (`atomic`, the OneCore/MultiCore count step).
Task store_token_counts(BlockCtx& blk, const MoeRank& a, int j0, int j1, bool atomic);
// Count-as-flag: stores this rank's count row into the windows of ranks i = c.index,
// c.index + c.count, ... (i != rank); with `flag`, then sets count_row_landed[rank] there.
Task send_count_rows(BlockCtx& blk, const MoeRank& a, Crew c, bool flag);

// ---- Dispatch (AIV): destination-side pull of packed rows, two UB buffers in ping-pong -------
struct PullBuffers {
    Tile* rows[2][2] = {};  // [buffer][1 or 2 rows]
    int next = 0;
};
PullBuffers alloc_pull_buffers(BlockCtx& blk, const MoeRank& a);
// The rows source rank `src` sends to local expert e, two at a time: a remote TLOAD, then the
// int8 part to gmA and (with `split_scale`, as the published V1) the scale in its own store.
Task pull_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int e, int src, bool split_scale);
void drain_pull_buffers(BlockCtx& blk);
// The source-side way (moe_dispatch's `push`), in the same buffers: the rank's own sorted rows
// [j0, j1), two at a time within one expert's run, loaded from its window and stored into the
// inbox of the rank holding the expert, at the row that rank's pull would have put them.
Task push_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int j0, int j1);
// Rows [r0, r1) of the rank's own inbox copied to its received buffer, two at a time.
Task copy_inbox_rows(BlockCtx& blk, const MoeRank& a, PullBuffers& p, int r0, int r1);

// ---- GMM1 / GMM2 (AIC): int8 x int8 -> int32 tiles, fixpipe dequant to fp16 ------------------
struct GemmStage {
    bool gmm1 = true;
    int k_red = 0;  // GMM1: K; GMM2: N/2
    int n_out = 0;  // GMM1: N; GMM2: K
};
GemmStage gmm1_stage(const MoeShape& s);
GemmStage gmm2_stage(const MoeShape& s);
// The published PtoGmmPreloadAsyncFixpipe buffers: A and B in two L1 stages, two L0A and two L0B
// slots, one L0C accumulator, one scale slot. Stage and slot indices persist across tiles and
// experts, as the token pools that guard them do: alloc arms them, drain_gemm_buffers consumes
// them before the buffers are released.
struct GemmBuffers {
    Tile *a_l1[2] = {}, *b_l1[2] = {}, *a_l0[2] = {}, *b_l0[2] = {};
    Tile *scale_l1 = nullptr, *acc = nullptr;
    int l1_stage = 0;  // the L1 stage the next K step's loads go to
    int l0_slot = 0;   // the L0A/L0B slot the next extracts go to
};
GemmBuffers alloc_gemm_buffers(BlockCtx& blk, const GemmStage& g);
void drain_gemm_buffers(BlockCtx& blk, GemmBuffers& buf);
// Output tile j of an m_tiles x n_tiles grid in the published order (GmmCommonGetBlockCoordMN):
// blocks of 9 N-columns, n fastest inside a block, then m; odd blocks run m backwards.
std::pair<int, int> tile_coord(int j, int m_tiles, int n_tiles);
// This core's tiles of expert e: tile j goes to core (rotation + j) mod c.count, and rotation
// then advances by tiles mod count (1 if that is 0), the published startCoreIdx. With `n_split`
// and a single M-tile with fewer N-tiles than cores, N is instead re-split into c.count strips of
// 32-column units (the published small-M balance for GMM1's first experts).
Task gemm_expert(BlockCtx& blk, const MoeRank& a, const GemmStage& g, GemmBuffers& buf, int e, Crew c, int& rotation,
                 bool n_split);

// ---- SwiGLU (AIV): h = gmC * s1; y = silu(h[:, :N/2]) * h[:, N/2:]; per-row int8 quant --------
struct SwigluBuffers {
    Tile *gate16[2] = {}, *up16[2] = {}, *s1[2] = {};  // double-buffered inputs
    Tile *gate = nullptr, *up = nullptr, *tmp = nullptr, *max = nullptr, *q = nullptr, *s2 = nullptr;
};
SwigluBuffers alloc_swiglu_buffers(BlockCtx& blk, const MoeRank& a);
// Received rows [r0, r1) of local expert e (indices into the rank's received buffer); row n+1
// loads while row n computes.
Task swiglu_rows(BlockCtx& blk, const MoeRank& a, SwigluBuffers& b, int e, int r0, int r1);

// ---- Combine (AIV): x s2, fp16, pushed into the source rank's window ------------------------
struct CombineBuffers {
    Tile *row16[2] = {}, *s2[2] = {};  // double-buffered inputs
    Tile* out16[2] = {};               // double-buffered outputs: a row's remote store runs while
                                       // the next row is loaded and scaled
    Tile* row32 = nullptr;
};
CombineBuffers alloc_combine_buffers(BlockCtx& blk, const MoeRank& a);
// The UB bytes those buffers take (tiles 32-byte aligned), for the op's checks before a run.
std::int64_t combine_ub_bytes(const MoeShape& s);
// Rows [i0, i1) of those source rank `src` sent to local expert e.
Task combine_rows(BlockCtx& blk, const MoeRank& a, CombineBuffers& b, int e, int src, int i0, int i1);

// The published baseline's small-M Combine: a 16 x 256 sub-tile of expert e's GMM2 output (rows
// [r0, r0 + rows) of the expert, columns [c0, c0 + 256)), x s2 per row, fp16, stored to every
// source rank its rows came from.
inline constexpr int kSubtileRows = 16;
struct SubtileBuffers {
    Tile *in16 = nullptr, *s2 = nullptr, *f32 = nullptr, *out16 = nullptr;
};
SubtileBuffers alloc_subtile_buffers(BlockCtx& blk);
Task combine_subtile(BlockCtx& blk, const MoeRank& a, SubtileBuffers& b, int e, int r0, int rows, int c0);

// ---- Unpermute (AIV): out[t] = fp16(sum_k prob[t,k] * combined[row(t,k)]) ---------------------
// Which tokens of a range a call does: all, or (the published V1's two phases) those whose every
// route went to a local expert below `cut`, or the others.
enum class TokenSet { All, RoutesBelowCut, NotAllBelowCut };
struct UnpermuteBuffers {
    Tile *probs = nullptr, *rows_idx = nullptr, *in16[2] = {}, *in32 = nullptr, *sum = nullptr, *out16 = nullptr;
};
UnpermuteBuffers alloc_unpermute_buffers(BlockCtx& blk, const MoeRank& a);
// The UB bytes those buffers take (tiles 32-byte aligned), for the op's checks before a run.
std::int64_t unpermute_ub_bytes(const MoeShape& s);
// Tokens [t0, t1) of `set`: per 2048-column chunk, each route's row chunk from the rank's own
// window (double-buffered), x prob, summed in fp32, stored as fp16; metadata (probs, rows) per
// block of 256 tokens.
Task unpermute_tokens(BlockCtx& blk, const MoeRank& a, UnpermuteBuffers& b, int t0, int t1, TokenSet set, int cut);
// Whether token t's routes all went to local experts below `cut`.
bool routes_below_cut(const MoeRank& a, int t, int cut);

}  // namespace tandem::kernels::moe
