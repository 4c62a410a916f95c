#include "sim/exec/block_ctx.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/exec/logical_process.hpp"
#include "sim/profile.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

std::int64_t capacity_of(const Profile& p, MemKind kind) {
    switch (kind) {
        case MemKind::L1: return p.chip.l1_bytes;
        case MemKind::L0A: return p.chip.l0a_bytes;
        case MemKind::L0B: return p.chip.l0b_bytes;
        case MemKind::L0C: return p.chip.l0c_bytes;
        case MemKind::UB: return p.chip.ub_bytes;
    }
    return 0;
}
}  // namespace

BlockCtx::BlockCtx(LogicalProcess& lp, CoreState& core, const BlockPlace& place, SimTime start)
    : start_time(start), lp_(lp), core_(core), place_(place), now_(start) {
    for (SimTime& t : core_.free_at) t = std::max(t, start);
}

int BlockCtx::rank() const { return lp_.rank(); }
int BlockCtx::ranks() const { return lp_.ranks(); }
bool BlockCtx::functional() const { return lp_.functional(); }
const CostModel& BlockCtx::cost() const { return lp_.cost(); }

Tile& BlockCtx::alloc_tile(MemKind kind, int rows, int cols, DType dtype, const std::string& name) {
    if (!core_has_memory(core_.type, kind)) {
        throw SimError(fmt::format("tile '{}': an {} core has no {} memory", name, core_type_name(core_.type),
                                   mem_kind_name(kind)));
    }
    if (rows <= 0 || cols <= 0) throw SimError(fmt::format("tile '{}': invalid shape {}x{}", name, rows, cols));
    const std::int64_t capacity = capacity_of(lp_.machine().profile(), kind);
    const std::int64_t bytes = std::int64_t{rows} * cols * dtype_bytes(dtype);
    const int k = static_cast<int>(kind);
    const std::int64_t offset = local_tile_bytes(mem_used_[k]);
    if (offset + bytes > capacity) {
        throw SimError(fmt::format("{} buffer overflow: tile '{}' ({}x{} {}, {} bytes) does not fit: {} of {} bytes "
                                   "already allocated",
                                   mem_kind_name(kind), name, rows, cols, dtype_name(dtype), bytes, mem_used_[k],
                                   capacity));
    }
    mem_used_[k] = offset + bytes;
    Tile& t = tiles_.emplace_back();
    t.write_end = freed_busy_until_[static_cast<std::size_t>(k)];
    t.read_end = t.write_end;
    t.owner = this;
    t.name = name;
    t.kind = kind;
    t.offset_bytes = offset;
    t.rows = rows;
    t.cols = cols;
    t.dtype = dtype;
    if (functional()) {
        auto& mem = core_.memory[static_cast<std::size_t>(k)];
        if (mem.empty()) mem = ZeroedBuffer(static_cast<std::size_t>(capacity));
        t.data = mem.data() + offset;
    }
    return t;
}

void BlockCtx::free_tiles_since(std::size_t mark) {
    if (mark > tiles_.size()) {
        throw SimError(fmt::format("free_tiles_since({}): only {} tiles are allocated (a mark from another block, or "
                                   "freed twice)",
                                   mark, tiles_.size()));
    }
    while (tiles_.size() > mark) {
        const Tile& t = tiles_.back();
        const auto k = static_cast<std::size_t>(t.kind);
        freed_busy_until_[k] = std::max({freed_busy_until_[k], t.write_end, t.read_end});
        mem_used_[k] = t.offset_bytes;
        tiles_.pop_back();
    }
}

void BlockCtx::wrong_pipe(Pipe p, const char* instr) const {
    throw SimError(fmt::format("{} needs the {} pipe, which an {} core does not have (wrong core type for this "
                               "instruction)",
                               instr, pipe_name(p), core_type_name(core_.type)));
}

SimTime BlockCtx::pipe_start(Pipe p, SimTime not_before) const {
    return std::max(not_before, core_.free_at[static_cast<std::size_t>(pipe_index(p))]);
}

void BlockCtx::occupy(Pipe p, SimTime start, SimTime end, SimTime free_at) {
    const auto i = static_cast<std::size_t>(pipe_index(p));
    core_.free_at[i] = free_at;
    core_.busy_ps[i] += end - start;
    ++core_.instructions[i];
    lp_.count_instruction();
    // A stage's extent and busy are its data pipes' work: its scalar unit's waits and notifies
    // fall where the block happens to be between pieces.
    if (stage_ >= 0 && p != Pipe::S) [[unlikely]] {
        const std::uint64_t bit = std::uint64_t{1} << stage_;
        if ((stages_entered_ & bit) == 0) {
            stages_entered_ |= bit;
            lp_.count_stage_block(stage_);
        }
        lp_.count_stage_busy(stage_, stage_item_, p, start, end);
    }
}

void BlockCtx::set_stage(int stage, int item) {
    if (stage < -1 || stage >= kMaxStages) {
        // (the block's rank, stream and index are added where the kernel's error surfaces)
        throw SimError(fmt::format("set_stage({}): a stage is -1 (none) or 0 to {}", stage, kMaxStages - 1));
    }
    if (item < -1 || item > kMaxStageItem)
        throw SimError(fmt::format("set_stage({}, {}): an item is -1 (none) or 0 to {}", stage, item, kMaxStageItem));
    stage_ = static_cast<std::int8_t>(stage);
    stage_item_ = static_cast<std::int16_t>(item);
}

}  // namespace tandem
