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

// ---- awaitable plumbing -------------------------------------------------------------------
namespace isa_detail {

// A data movement between GM (local or a peer's) and a local tile.
class [[nodiscard]] MemMove {
public:
    enum class Dir : std::uint8_t { Load, Store };
    MemMove(Dir dir, Tile& tile, const GmTensor& gm);
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    void await_resume();

private:
    void prepare();
    Dir dir_;
    Tile& tile_;
    GmTensor gm_;
    BlockCtx& blk_;
    Pipe pipe_ = Pipe::MTE2;
    SimTime issue_ = 0;
    SimTime start_ = 0;
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

}  // namespace isa_detail

// ---- data movement ------------------------------------------------------------------------
// GM -> L1 (AIC) or GM -> UB (AIV) on MTE2. From a peer's window it is a remote read (AIV).
isa_detail::MemMove TLOAD(Tile& dst, const GmTensor& src);
// L0C -> GM on FIX (AIC), or UB -> GM on MTE3 (AIV; into a peer's window it crosses the link).
isa_detail::MemMove TSTORE(const GmTensor& dst, Tile& src);
// L1 -> L0A / L0B on MTE1: the rows x cols of `dst` taken from `src` at (row, col).
void TEXTRACT(Tile& dst, const Tile& src, int row, int col);

// ---- cube ---------------------------------------------------------------------------------
// c = a * b (TMATMUL) or c += a * b (TMATMUL_ACC): a in L0A (m x k fp16), b in L0B (k x n fp16),
// c in L0C (m x n fp32).
void TMATMUL(Tile& c, const Tile& a, const Tile& b);
void TMATMUL_ACC(Tile& c, const Tile& a, const Tile& b);

// ---- communication ------------------------------------------------------------------------
// Copy src (local GM) to dst (a peer's window) through the UB tile `ub`: TLOAD, wait, TSTORE,
// wait; serial like the published single-tile TPUT.
Task TPUT(GmTensor dst, GmTensor src, Tile& ub);
// Copy src (a peer's window) to dst (local GM) through `ub`: remote TLOAD, wait, TSTORE, wait.
Task TGET(GmTensor dst, GmTensor src, Tile& ub);
// Write `value` into the signal (Set) or add it atomically (AtomicAdd); visible at its rank
// after the local or remote atomic latency.
void TNOTIFY(BlockCtx& blk, SignalAddr sig, std::int32_t value, NotifyOp op);
// Spin until `signal cmp value` holds on this rank's signal; resumes at the simulated time the
// condition first held (plus one poll).
isa_detail::SignalRead TWAIT(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value);
// Read the signal once: returns whether `signal cmp value` holds now.
isa_detail::SignalRead TTEST(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value);

// ---- intra-core synchronisation -----------------------------------------------------------
void set_flag(BlockCtx& blk, Pipe src, Pipe dst, int event_id);
void wait_flag(BlockCtx& blk, Pipe src, Pipe dst, int event_id);
void pipe_barrier(BlockCtx& blk, Pipe pipe);

}  // namespace tandem
