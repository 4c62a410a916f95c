#pragma once
// Shared by the instruction implementations: log one instruction when the event log is on.
#include "sim/exec/block_ctx.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/core/cost_model.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::isa_detail {

struct RecordArgs {
    std::int64_t bytes = 0;
    std::int64_t address = 0;
    std::int32_t peer = -1;
    std::int32_t value = 0;
    SimTime visible = 0;
};

inline void record(BlockCtx& blk, Pipe pipe, Opcode op, SimTime start, SimTime end, const RecordArgs& a = {}) {
    LogicalProcess& lp = blk.lp();
    if (!lp.logging()) return;
    InstrRecord r;
    r.start = start;
    r.end = end;
    r.bytes = a.bytes;
    r.address = a.address;
    r.rank = lp.rank();
    r.block = blk.block_idx();
    r.peer = a.peer;
    r.stream = static_cast<std::int16_t>(lp.stream_id());
    r.core = static_cast<std::int16_t>(blk.core().index);
    r.core_type = blk.core_type();
    r.pipe = pipe;
    r.op = op;
    r.stage = static_cast<std::int8_t>(blk.stage());
    r.stage_item = static_cast<std::int16_t>(blk.stage_item());
    r.value = a.value;
    r.visible = a.visible;
    lp.log(r);
}

}  // namespace tandem::isa_detail
