#include "sim/exec/instr_record.hpp"

#include <tuple>

#include <fmt/format.h>

namespace tandem {

const char* opcode_name(Opcode op) {
    switch (op) {
        case Opcode::TLOAD: return "TLOAD";
        case Opcode::TEXTRACT: return "TEXTRACT";
        case Opcode::TMATMUL: return "TMATMUL";
        case Opcode::TMATMUL_ACC: return "TMATMUL_ACC";
        case Opcode::TSTORE: return "TSTORE";
        case Opcode::TNOTIFY: return "TNOTIFY";
        case Opcode::TWAIT: return "TWAIT";
        case Opcode::TTEST: return "TTEST";
        case Opcode::SET_FLAG: return "SET_FLAG";
        case Opcode::WAIT_FLAG: return "WAIT_FLAG";
        case Opcode::PIPE_BARRIER: return "PIPE_BARRIER";
        case Opcode::BLOCK: return "BLOCK";
        case Opcode::TMATMUL_BIAS: return "TMATMUL_BIAS";
        case Opcode::TSTORE_ATOMIC_ADD: return "TSTORE_ATOMIC_ADD";
        case Opcode::TADD: return "TADD";
        case Opcode::TADDS: return "TADDS";
        case Opcode::TMULS: return "TMULS";
        case Opcode::TCVT: return "TCVT";
        case Opcode::TMOV: return "TMOV";
        case Opcode::TADD_ROWVEC: return "TADD_ROWVEC";
        case Opcode::TADD_COLVEC: return "TADD_COLVEC";
        case Opcode::CROSS_CORE_SET_FLAG: return "CROSS_CORE_SET_FLAG";
        case Opcode::CROSS_CORE_WAIT_FLAG: return "CROSS_CORE_WAIT_FLAG";
        case Opcode::TMUL: return "TMUL";
        case Opcode::TDIV: return "TDIV";
        case Opcode::TEXP: return "TEXP";
        case Opcode::TABS: return "TABS";
        case Opcode::TROWMAX: return "TROWMAX";
        case Opcode::TROWEXPANDMUL: return "TROWEXPANDMUL";
        case Opcode::TSORT: return "TSORT";
        case Opcode::TMRGSORT: return "TMRGSORT";
        case Opcode::TSTORE_FP: return "TSTORE_FP";
        case Opcode::SCALAR: return "SCALAR";
        case Opcode::TGET_ASYNC: return "TGET_ASYNC";
        case Opcode::WAIT_ASYNC: return "WAIT_ASYNC";
        case Opcode::DSB: return "DSB";
    }
    return "?";
}

bool record_order(const InstrRecord& a, const InstrRecord& b) {
    // Every field takes part, so equal records are identical and any sort gives the same bytes.
    return std::tie(a.start, a.rank, a.stream, a.block, a.pipe, a.end, a.op, a.address, a.bytes, a.peer, a.core,
                    a.core_type, a.value, a.visible) < std::tie(b.start, b.rank, b.stream, b.block, b.pipe, b.end, b.op,
                                                      b.address, b.bytes, b.peer, b.core, b.core_type, b.value, b.visible);
}

std::string format_record(const InstrRecord& r) {
    std::string line = fmt::format("{} {} r{} s{} {}{} b{} {} {} bytes={} addr={:#x} peer={} value={} visible={}", r.start,
                                   r.end, r.rank, r.stream, core_type_name(r.core_type), r.core, r.block, pipe_name(r.pipe),
                                   opcode_name(r.op), r.bytes, r.address, r.peer, r.value, r.visible);
    if (r.stage >= 0) line += fmt::format(" stage={}", r.stage);
    if (r.stage_item >= 0) line += fmt::format(" item={}", r.stage_item);  // only kernels that name stages write it
    return line;
}

}  // namespace tandem
