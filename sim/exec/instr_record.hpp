#pragma once
// One executed instruction, as the event log and the trace see it.
#include <cstdint>
#include <limits>
#include <string>

#include "sim/core/pipe.hpp"
#include "sim/core/stream_cores.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

enum class Opcode : std::uint8_t {
    TLOAD,
    TEXTRACT,
    TMATMUL,
    TMATMUL_ACC,
    TSTORE,
    TNOTIFY,
    TWAIT,
    TTEST,
    SET_FLAG,
    WAIT_FLAG,
    PIPE_BARRIER,
    BLOCK,  // a whole block, from its start to its end on the core
    TMATMUL_BIAS,
    TSTORE_ATOMIC_ADD,  // TSTORE(dst, src, AtomicType::AtomicAdd)
    TADD,
    TADDS,
    TMULS,
    TCVT,
    TMOV,
    TADD_ROWVEC,
    TADD_COLVEC,
    CROSS_CORE_SET_FLAG,
    CROSS_CORE_WAIT_FLAG,
    TMUL,
    TDIV,
    TEXP,
    TABS,
    TROWMAX,
    TROWEXPANDMUL,
    TSORT,
    TMRGSORT,
    TSTORE_FP,   // L0C int32 -> GM with the fixpipe's per-column dequant scale
    SCALAR,      // a scalar loop (TSCALAR)
    TGET_ASYNC,  // a copy started on the SDMA engine (visible: when it completes)
    WAIT_ASYNC,  // the scalar waiting for an SDMA copy
    DSB,         // the scalar waiting for its core's remote writes to be acknowledged (dsb)
};

const char* opcode_name(Opcode op);

struct InstrRecord {
    SimTime start = 0;
    SimTime end = 0;
    std::int64_t bytes = 0;     // data moved, or FLOPs for the cube
    std::int64_t address = 0;   // GM/signal address when relevant
    std::int32_t rank = 0;
    std::int32_t block = 0;
    std::int32_t peer = -1;     // other rank for remote traffic / notify
    std::int16_t stream = 0;
    std::int16_t core = 0;
    CoreType core_type = CoreType::AIC;
    Pipe pipe = Pipe::S;
    Opcode op = Opcode::TLOAD;
    std::int8_t stage = -1;     // the op's stage the block was in (BlockCtx::set_stage), -1: none
    std::int16_t stage_item = -1;  // which piece of the stage's work (an expert), -1: none
    std::int32_t value = 0;     // signal value written / expected
    SimTime visible = 0;        // TNOTIFY: when the write becomes visible at its rank
};

static_assert(std::numeric_limits<decltype(InstrRecord::core)>::max() >= kMaxCoresPerType,
              "a record holds the index of any core a chip may have");

// Total order of records, for logs that do not depend on which host thread ran first.
bool record_order(const InstrRecord& a, const InstrRecord& b);
std::string format_record(const InstrRecord& r);

}  // namespace tandem
