#pragma once
// What a running block sees: its index, its core, its scalar clock, its local-memory tiles and
// its set_flag/wait_flag queues. Kernels receive a BlockCtx& and pass it (or its tiles) to the
// tile instructions in sim/isa/.
#include <array>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/core/core_state.hpp"
#include "sim/core/cost_memo.hpp"
#include "sim/core/pipe.hpp"
#include "sim/core/tile.hpp"
#include "sim/exec/signal.hpp"
#include "sim/exec/task.hpp"
#include "sim/sanitize/san_part.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

// Local buffers (L1, L0A/B/C, UB) are 32-byte aligned on Ascend cores: each tile a block
// allocates starts at the next multiple, so a tile of n bytes takes local_tile_bytes(n) of them.
inline constexpr std::int64_t kLocalTileAlignBytes = 32;
constexpr std::int64_t local_tile_bytes(std::int64_t bytes) {
    return (bytes + kLocalTileAlignBytes - 1) / kLocalTileAlignBytes * kLocalTileAlignBytes;
}

class LogicalProcess;
struct CostModel;
struct SignalWord;

// Where a block (or, in a MIX kernel, one part of a block) runs.
struct BlockPlace {
    int block_idx = 0;
    int block_num = 1;
    int slot = 0;           // the logical process's id for it (the block index unless MIX)
    int sub_block_idx = 0;  // MIX: 0 for the AIC and the first AIV, 1 for the second AIV
    int sub_block_num = 1;  // MIX: 2 on an AIV, 1 on the AIC
    bool mix = false;
};

class BlockCtx {
public:
    BlockCtx(LogicalProcess& lp, CoreState& core, const BlockPlace& place, SimTime start);

    // ---- what kernel code asks ----
    // In a MIX kernel the block index is the cluster block's (its three parts share it) and
    // core_type() says which part runs (Ascend's `if ASCEND_IS_AIC`).
    int block_idx() const { return place_.block_idx; }
    int block_num() const { return place_.block_num; }
    int sub_block_idx() const { return place_.sub_block_idx; }
    int sub_block_num() const { return place_.sub_block_num; }
    bool mix() const { return place_.mix; }
    int rank() const;
    int ranks() const;
    CoreType core_type() const { return core_.type; }
    SimTime now() const { return now_; }
    bool functional() const;  // does this block move and compute data?

    // Allocate a rows x cols tile in this core's local memory `kind`; throws SimError when the
    // memory is full (naming the tile, the memory and the bytes in use).
    Tile& alloc_tile(MemKind kind, int rows, int cols, DType dtype, const std::string& name);
    // Tiles are freed in stack order, as an Ascend kernel re-initialises its buffers between
    // stages: take a mark, allocate a stage's tiles, then free every tile allocated since the
    // mark. A tile allocated afterwards in the same memory starts after every access to the freed
    // tiles of that memory (their pending reads and writes), so no hazard is lost. Tile&s of freed
    // tiles must not be used again.
    std::size_t tile_mark() const { return tiles_.size(); }
    void free_tiles_since(std::size_t mark);

    // Which stage of the op the instructions issued from now on belong to (0 .. kMaxStages - 1;
    // -1: none, the default). The op names its stages (OpInstance::stage_names()); the kernel
    // statistics (KernelStats::stages), the event log and the trace group by it. A stage is a
    // label only: it changes no timing. `item` says which piece of the stage's work the
    // instructions do (moe_ffn: the local expert; -1: none), for a profile per stage and item
    // (the event log and the trace carry it; prof_analysis/stage_profile.py reads it).
    static constexpr int kMaxStages = 64;
    static constexpr int kMaxStageItem = 32767;
    void set_stage(int stage, int item = -1);
    int stage() const { return stage_; }
    int stage_item() const { return stage_item_; }

    // ---- for the instruction implementations ----
    int slot() const { return place_.slot; }
    // This part as the sanitizer's hooks take it (sim/sanitize/stream_sanitizer.hpp).
    SanPart san_part() const { return SanPart{place_.slot, now_}; }
    LogicalProcess& lp() { return lp_; }
    const LogicalProcess& lp() const { return lp_; }
    CoreState& core() { return core_; }
    const CoreState& core() const { return core_; }
    const CostModel& cost() const;
    // The last cube and L1 -> L0 costs this block asked for (sim/core/cost_memo.hpp).
    CostMemo& cost_memo() { return cost_memo_; }
    SimTime& now_ref() { return now_; }
    // Throws SimError when this core type has no pipe `p` (inline: every instruction asks).
    void require_pipe(Pipe p, const char* instr) const {
        if (!core_has_pipe(core_.type, p)) [[unlikely]] wrong_pipe(p, instr);
    }
    // Issue an instruction on pipe `p` no earlier than `not_before`: returns its start time.
    SimTime pipe_start(Pipe p, SimTime not_before) const;
    // Mark pipe `p` busy over [start, end) and count it (and log it when the log is on).
    void occupy(Pipe p, SimTime start, SimTime end) { occupy(p, start, end, end); }
    // The same for an instruction that holds its pipe until `free_at`, past the end of its own
    // work (`end`: what its busy time counts): a FIX store, whose write drains into GM after the
    // pipe has read and converted the accumulator, and whose completion the pipe waits for.
    void occupy(Pipe p, SimTime start, SimTime end, SimTime free_at);

    struct FlagQueue {
        std::array<SimTime, 8> times{};
        std::uint8_t head = 0;
        std::uint8_t size = 0;
    };
    // The queue of (src, dst, id), created at its first use. A kernel uses a handful of the
    // 392 combinations, so the queues are stored only for those: a table of every combination
    // cost 28 KiB per block, most of a ring rank's memory at hundreds of ranks. The reference is
    // valid until the next flag_queue() call.
    FlagQueue& flag_queue(Pipe src, Pipe dst, int id) {
        std::uint16_t& q = flag_index_[static_cast<std::size_t>((pipe_index(src) * kPipeCount + pipe_index(dst)) * kEventIds + id)];
        if (q == 0) {
            flag_queues_.emplace_back();
            q = static_cast<std::uint16_t>(flag_queues_.size());
        }
        return flag_queues_[q - 1U];
    }

    // Scheduling state (owned by the logical process).
    std::coroutine_handle<> resume_point;
    Task task;
    bool finished = false;
    bool waiting = false;  // parked on a TWAIT condition
    SignalAddr wait_signal;
    const SignalWord* wait_word = nullptr;  // wait_signal's word once it exists (SignalStore::find)
    // The last check of a parked TWAIT that found its condition false (LogicalProcess::
    // wait_first_true): the word's version (or the store's word count while the word does not
    // exist) and the time of the first op of the word it did not reach. While neither changed and
    // the window ends no later than that op, the answer is the same. wait_quiet_until == 0: none.
    std::uint64_t wait_seen_version = 0;
    SimTime wait_quiet_until = 0;
    CmpOp wait_cmp = CmpOp::EQ;
    std::int32_t wait_value = 0;
    SimTime wait_since = 0;
    SimTime wait_issue = 0;
    int cross_wait_flag = -1;  // >= 0: parked in CrossCoreWaitFlag on this flag id
    SimTime start_time = 0;
    const char* current_instr = "start";
    SimTime sdma_free_at = 0;  // when the block's last TGET_ASYNC ends (its copies queue)
    // When the acknowledgement of the block's latest remote write is back at its core: the write
    // lands a route's latency after its last byte leaves, and its response takes the route back
    // (dsb waits for it; sim/MODEL.md "One core's remote traffic").
    SimTime remote_writes_acked_at = 0;

private:
    [[noreturn]] void wrong_pipe(Pipe p, const char* instr) const;

    LogicalProcess& lp_;
    CoreState& core_;
    BlockPlace place_;
    SimTime now_;
    std::int8_t stage_ = -1;
    std::int16_t stage_item_ = -1;
    CostMemo cost_memo_;
    std::uint64_t stages_entered_ = 0;  // bit s: this block has issued a data-pipe instruction in stage s
    std::array<std::int64_t, kMemKindCount> mem_used_{};
    std::array<SimTime, kMemKindCount> freed_busy_until_{};  // the last access to a freed tile, per memory
    std::deque<Tile> tiles_;  // deque: Tile& handed to kernels stays valid
    std::array<std::uint16_t, kPipeCount * kPipeCount * kEventIds> flag_index_{};  // 1 + index in flag_queues_, 0: none
    static_assert(kPipeCount * kPipeCount * kEventIds < 0xFFFF, "flag_index_ holds 1 + any queue's index");
    std::vector<FlagQueue> flag_queues_;
};

}  // namespace tandem
