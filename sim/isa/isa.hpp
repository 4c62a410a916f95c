#pragma once
// The tile ISA kernels are written in, named after Ascend's PTO instructions.
//
// Instructions that touch something shared beyond the core (GM bandwidth, a link, a signal)
// are awaited: `co_await TLOAD(aMatTile, aGlobal);`. The rest act on the core alone and are
// plain calls: `TEXTRACT(aTile, aMatTile, 0, k);`. Every instruction takes simulated time on
// its pipe from the profile; pipes of one core overlap unless set_flag/wait_flag or
// pipe_barrier order them, and a read of a tile before the write it needs has finished is
// reported as a hazard (a missing flag) rather than silently allowed.
#include <coroutine>
#include <cstdint>

#include "sim/core/tile.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/exec/signal.hpp"
#include "sim/exec/task.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem {

inline constexpr Pipe PIPE_S = Pipe::S;
inline constexpr Pipe PIPE_V = Pipe::V;
inline constexpr Pipe PIPE_M = Pipe::M;
inline constexpr Pipe PIPE_MTE1 = Pipe::MTE1;
inline constexpr Pipe PIPE_MTE2 = Pipe::MTE2;
inline constexpr Pipe PIPE_MTE3 = Pipe::MTE3;
inline constexpr Pipe PIPE_FIX = Pipe::FIX;
inline constexpr Pipe PIPE_ALL = Pipe::ALL;

// TSTORE's mode (PTO's AtomicType; Ascend C's SetAtomicAdd before a DataCopy): a plain store,
// or dst += src at the target, in dst's dtype.
enum class AtomicType : std::uint8_t { None, AtomicAdd };

// ---- awaitable plumbing -------------------------------------------------------------------
// The completion of an asynchronous copy (TGET_ASYNC): when its last byte is in local GM.
struct AsyncEvent {
    SimTime done = 0;
};

namespace isa_detail {

// A data movement between GM (local or a peer's) and a local tile.
class [[nodiscard]] MemMove {
public:
    enum class Dir : std::uint8_t { Load, Store };
    MemMove(Dir dir, Tile& tile, const GmTensor& gm, AtomicType atomic = AtomicType::None, const Tile* scale = nullptr);
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    void await_resume();

private:
    void prepare();
    Dir dir_;
    AtomicType atomic_;
    Tile& tile_;
    GmTensor gm_;
    BlockCtx& blk_;
    Pipe pipe_ = Pipe::MTE2;
    SimTime issue_ = 0;
    SimTime start_ = 0;
    // TSTORE_FP: the fixpipe's per-column scale (an L1 tile, 1 x cols fp32) applied to an int32
    // accumulator on its way to GM.
    const Tile* scale_ = nullptr;
};

// TWAIT (blocks until the condition holds) and TTEST (reads once, returns the comparison).
class [[nodiscard]] SignalRead {
public:
    SignalRead(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value, bool blocking);
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    bool await_resume();

private:
    BlockCtx& blk_;
    SignalAddr sig_;
    CmpOp cmp_;
    std::int32_t value_;
    bool blocking_;
    SimTime issue_ = 0;
    bool read_done_ = false;
    bool result_ = false;
};

// TGET_ASYNC: a copy from a peer's window into local GM on the chip's SDMA engine, started by
// the block's scalar; co_await returns at once with the event of its completion.
class [[nodiscard]] SdmaCopy {
public:
    SdmaCopy(BlockCtx& blk, const GmTensor& dst, const GmTensor& src);
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    AsyncEvent await_resume();

private:
    BlockCtx& blk_;
    GmTensor dst_;
    GmTensor src_;
    SimTime issue_ = 0;
};

// CrossCoreWaitFlag: blocks the scalar until the flag's count is there.
class [[nodiscard]] CrossCoreWait {
public:
    CrossCoreWait(BlockCtx& blk, int flag_id);
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    void await_resume();

private:
    BlockCtx& blk_;
    int flag_;
    SimTime issue_ = 0;
};

}  // namespace isa_detail

// ---- data movement ------------------------------------------------------------------------
// GM -> L1 (AIC) or GM -> UB (AIV) on MTE2. From a peer's window it is a remote read (AIV).
isa_detail::MemMove TLOAD(Tile& dst, const GmTensor& src);
// L0C -> GM on FIX (AIC), or UB -> GM on MTE3 (AIV; into a peer's window it crosses the link).
// From an fp32 L0C accumulator into an fp16 or bf16 tensor the FIX pipe casts on the way
// (round to nearest even); from an int32 one (int8 operands) into an fp32 tensor it converts
// (exact while |value| < 2^24), as TSTORE_FP with a scale of ones would but without the scale's
// load (an assumption: docs/IRIS.md 'int8'). AtomicAdd: the target adds (dst += src in dst's dtype, the sum
// rounded to it) instead of overwriting; the add lands at the target a local or remote atomic
// latency after issue at the earliest, ordered with every other add by simulated time.
isa_detail::MemMove TSTORE(const GmTensor& dst, Tile& src, AtomicType atomic = AtomicType::None);
// L1 -> L0A / L0B on MTE1: the rows x cols of `dst` taken from `src` at (row, col). It costs what
// the hardware instructions it becomes cost (textract_hardware_moves): each pays
// mte1_latency_cycles and a scalar issue, and the bytes move at the path's rate.
void TEXTRACT(Tile& dst, const Tile& src, int row, int col);
// One fractal's row: 32 bytes along K (16 fp16, 32 int8, 8 fp32 values), the depth of the cube's
// fractal (16 x 16 fp16, 16 x 32 int8, 16 x 8 fp32).
inline constexpr int kFractalRowBytes = 32;
// The hardware instructions one TEXTRACT into `dst` becomes, as the published single-chip GEMM
// issues them (kernels/gemm/README.md "The kernel, step by step"): into L0A, set_fmatrix (a
// register write) and one load3Dv2; into L0B, one load2D per fractal row of K (its 64 x 256 fp16
// B slice is 4 x load_cbuf_to_cb of 16 fractals each), so ceil(rows x dtype bytes / 32).
int textract_hardware_moves(const Tile& dst);

// L0C (int32 accumulator) -> GM on FIX with the fixpipe's dequant (Ascend's TMOV L1 -> FB, then
// TSTORE_FP): dst[i][j] = cast(acc[i][j] * scale[j]), scale an L1 tile of 1 x cols fp32 (the
// product taken in fp32, then rounded once to dst's fp16, bf16 or fp32). Costs a TSTORE of dst's
// bytes; the scale's own MTE2 load is the kernel's TLOAD. Local GM only.
isa_detail::MemMove TSTORE_FP(const GmTensor& dst, Tile& acc, const Tile& scale);

// ---- cube ---------------------------------------------------------------------------------
// c = a * b (TMATMUL) or c += a * b (TMATMUL_ACC): a in L0A (m x k), b in L0B (k x n), c in L0C
// (m x n). a and b are both fp16, both bf16 or both fp32, c fp32 (fp32 accumulate); or both int8
// and c int32 (exact integer sums: int8 x int8 -> int32, Ascend's int8 cube mode, computed at
// once, not deferred). Cost: cube_fixed_cycles plus the fp16 fractal count times the operands'
// factor from the profile: 1 for fp16, pipes.cube_bf16_cost_factor (1.0: the 910B takes either
// 2-byte type at one rate), pipes.cube_int8_cost_factor (0.5) or pipes.cube_fp32_cost_factor
// (4.0: pto-isa's cube cost model, a 16x8x16 fp32 repeat in 2 cycles).
void TMATMUL(Tile& c, const Tile& a, const Tile& b);
void TMATMUL_ACC(Tile& c, const Tile& a, const Tile& b);
// c = broadcast(bias) + a * b, bias an L1 tile (fp32, fp16 or bf16) of 1 x n (one value per
// column, as Ascend's bias table) or m x 1 (one per row: Tandem's extension). Costs TMATMUL.
void TMATMUL_BIAS(Tile& c, const Tile& a, const Tile& b, const Tile& bias);

// ---- vector unit (AIV, PIPE_V) on UB tiles of equal shape -----------------------------------
// Each result is rounded to the destination's dtype (fp32, fp16, bf16). Cost: start-up plus
// ceil(bytes of the widest operand / vector_bytes_per_cycle) cycles.
void TADD(Tile& dst, const Tile& a, const Tile& b);              // dst = a + b
void TADDS(Tile& dst, const Tile& src, float s);                 // dst = src + s
void TMULS(Tile& dst, const Tile& src, float s);                 // dst = src * s
void TCVT(Tile& dst, const Tile& src);                           // dst = src cast to dst's dtype
void TMOV(Tile& dst, const Tile& src);                           // UB -> UB copy
void TADD_ROWVEC(Tile& dst, const Tile& src, const Tile& vec);   // dst[i][j] = src[i][j] + vec[j], vec 1 x cols
void TADD_COLVEC(Tile& dst, const Tile& src, const Tile& vec);   // dst[i][j] = src[i][j] + vec[i], vec rows x 1
// TCVT also converts to and from int8 (dst int8: round to nearest even, saturate to [-128, 127];
// the cast Ascend's quantisers use), costed like any TCVT.
void TMUL(Tile& dst, const Tile& a, const Tile& b);              // dst = a * b
void TDIV(Tile& dst, const Tile& a, const Tile& b);              // dst = a / b   (transcendental cost)
void TEXP(Tile& dst, const Tile& src);                           // dst = e^src   (transcendental cost)
void TABS(Tile& dst, const Tile& src);                           // dst = |src|
// dst (rows x 1) = the max of each row of src; costs one pass over src.
void TROWMAX(Tile& dst, const Tile& src);
// dst[i][j] = src[i][j] * vec[i], vec rows x 1 (a per-row scale: dynamic quantisation).
void TROWEXPANDMUL(Tile& dst, const Tile& src, const Tile& vec);
// Sorts the 1 x n fp32 `keys` in place in descending order (stable) and writes each sorted
// element's original position into `idx` (1 x n fp32; exact below 2^24), Ascend's TSORT32 +
// TMRGSORT: a 32-element block sort, then 4-way merge rounds. Cost: 1 + ceil(log4(ceil(n/32)))
// passes of the sort unit, each vector_startup_cycles + n x vector_sort_cycles_per_element.
void TSORT(Tile& keys, Tile& idx);
// TMRGSORT: the same result when `keys` already holds at most four sorted runs (a 4-way merge,
// as the published MoE kernel's final merge across its sort cores): one pass of the sort unit
// over the n keys. (Functionally a stable sort: the runs are not checked.)
void TMRGSORT(Tile& keys, Tile& idx);

// ---- scalar -------------------------------------------------------------------------------
// A scalar loop of `instructions` scalar instructions (count runs, prefix sums, index walks):
// scalar_issue_cycles each on the scalar clock. Computes nothing; the kernel's C++ does.
void TSCALAR(BlockCtx& blk, std::int64_t instructions);

// ---- communication ------------------------------------------------------------------------
// Copy src (local GM) to dst (a peer's window) through the UB tile `ub`: TLOAD, wait, TSTORE,
// wait; serial like the published single-tile TPUT.
Task TPUT(GmTensor dst, GmTensor src, Tile& ub);
// Copy src (a peer's window) to dst (local GM) through `ub`: remote TLOAD, wait, TSTORE, wait.
Task TGET(GmTensor dst, GmTensor src, Tile& ub);
// Copy src (a peer's window) to dst (local GM, same shape and dtype) on the chip's SDMA engine,
// as pto-isa's TGET_ASYNC: no pipe, UB or link of the block is used. `co_await` returns when the
// scalar has issued it, with the event of its completion; WAIT_ASYNC waits for that. A block's
// copies run one after another, each sdma_latency_ns then its bytes at sdma_gib_s (or what the
// local L2 leaves). Publish the destination's bytes to other blocks only after WAIT_ASYNC: the
// stream sanitizer counts the copy done there (not at a pipe_barrier), and reports a block that
// reads them on a notify sent earlier.
isa_detail::SdmaCopy TGET_ASYNC(BlockCtx& blk, const GmTensor& dst, const GmTensor& src);
// The scalar waits until the copy of `event` has completed (then one poll).
void WAIT_ASYNC(BlockCtx& blk, const AsyncEvent& event);
// Write `value` into the signal (Set) or add it atomically (AtomicAdd); visible at its rank
// after the local or remote atomic latency.
void TNOTIFY(BlockCtx& blk, SignalAddr sig, std::int32_t value, NotifyOp op);
// Spin until `signal cmp value` holds on this rank's signal; resumes at the simulated time the
// condition first held (plus one poll).
isa_detail::SignalRead TWAIT(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value);
// Read the signal once: returns whether `signal cmp value` holds now.
isa_detail::SignalRead TTEST(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value);

// ---- cross-core synchronisation (Ascend FFTS; MIX kernels) ----------------------------------
// CrossCoreSetFlag<mode, pipe>(flagId): once `pipe` has drained, one count of flag `flag_id`
// (0..15) goes, after cross_core_flag_latency_cycles, to:
//   mode 2 (within a cluster of a MIX kernel): from the AIC to each of its two AIVs; from an
//           AIV to the AIC, which receives a count once both AIVs have set;
//   mode 1 (the two AIVs of a cluster): to both, a count once both have set (a barrier);
//   mode 0 (every core of this type in the launch): to all, a count once all have set (an
//           intra-kernel barrier; the launch must fit on the cores at once).
// A core's counter holds at most 15 counts (4 bits): one more is an error naming the flag.
void CrossCoreSetFlag(BlockCtx& blk, int mode, Pipe pipe, int flag_id);
// CrossCoreWaitFlag(flagId): the scalar waits for one count of the flag and takes it.
isa_detail::CrossCoreWait CrossCoreWaitFlag(BlockCtx& blk, int flag_id);

// ---- intra-core synchronisation -----------------------------------------------------------
void set_flag(BlockCtx& blk, Pipe src, Pipe dst, int event_id);
void wait_flag(BlockCtx& blk, Pipe src, Pipe dst, int event_id);
void pipe_barrier(BlockCtx& blk, Pipe pipe);
// dsb(DSB_DDR): the scalar waits until every remote write this core has issued is acknowledged,
// its response back over the write's route (a route's latency after the write landed). The
// published kernels put it after pipe_barrier(PIPE_ALL), before a signal that announces the data.
void dsb(BlockCtx& blk);

}  // namespace tandem
