// TMATMUL / TMATMUL_ACC on the cube (PIPE_M). Functionally: fp16 operands widened to fp32 and
// multiplied by OpenBLAS, accumulating in fp32 like the cube's L0C; deferred as a term of the
// accumulator's chain (sim/isa/deferred_cube.hpp).
#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "sim/isa/deferred_cube.hpp"
#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

void check_operands(const char* instr, const Tile& c, const Tile& a, const Tile& b) {
    if (a.kind != MemKind::L0A || b.kind != MemKind::L0B || c.kind != MemKind::L0C) {
        throw SimError(fmt::format("{} takes c in L0C, a in L0A, b in L0B; got c '{}' in {}, a '{}' in {}, b '{}' in {}",
                                   instr, c.name, mem_kind_name(c.kind), a.name, mem_kind_name(a.kind), b.name,
                                   mem_kind_name(b.kind)));
    }
    if (a.dtype != DType::F16 || b.dtype != DType::F16 || c.dtype != DType::F32) {
        throw SimError(fmt::format("{}: the cube takes fp16 a and b and accumulates fp32 c", instr));
    }
    if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
        throw SimError(fmt::format("{}: shapes do not chain: c '{}' {}x{} = a '{}' {}x{} * b '{}' {}x{}", instr, c.name,
                                   c.rows, c.cols, a.name, a.rows, a.cols, b.name, b.rows, b.cols));
    }
}

void matmul(const char* instr, Tile& c, const Tile& a, const Tile& b, bool accumulate) {
    BlockCtx& blk = *c.owner;
    blk.current_instr = instr;
    blk.require_pipe(Pipe::M, instr);
    check_operands(instr, c, a, b);
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    const SimTime start = blk.pipe_start(Pipe::M, issue);
    for (const Tile* in : {&a, &b}) {
        if (in->write_end > start) {
            throw SimError(fmt::format("hazard: {} starts at {:.4f} us reading tile '{}' before the {} writing it ends "
                                       "at {:.4f} us (missing set_flag/wait_flag?)",
                                       instr, to_us(start), in->name, in->last_writer, to_us(in->write_end)));
        }
    }
    if (c.read_end > start) {
        throw SimError(fmt::format("hazard: {} overwrites accumulator '{}' at {:.4f} us while a read of it runs until "
                                   "{:.4f} us (missing set_flag/wait_flag?)",
                                   instr, c.name, to_us(start), to_us(c.read_end)));
    }
    const SimTime end = start + cost.cube_ps(a.rows, a.cols, b.cols);
    blk.now_ref() = issue;
    blk.occupy(Pipe::M, start, end);
    const_cast<Tile&>(a).read_end = std::max(a.read_end, end);
    const_cast<Tile&>(b).read_end = std::max(b.read_end, end);
    c.write_end = end;
    c.last_writer = instr;
    const std::int64_t flops = 2LL * a.rows * a.cols * b.cols;
    isa_detail::record(blk, Pipe::M, accumulate ? Opcode::TMATMUL_ACC : Opcode::TMATMUL, start, end,
                       isa_detail::RecordArgs{flops});
    if (!blk.functional()) return;
    if (c.column_major) throw SimError(fmt::format("{}: accumulator '{}' must be row-major", instr, c.name));
    // Deferred (sim/isa/deferred_cube.hpp): the product is a term of the accumulator's chain.
    MatmulTerm term{operand_of(a), operand_of(b)};
    if (!accumulate) {
        c.chain = std::make_shared<MatmulChain>(MatmulChain{c.rows, c.cols, nullptr, {}});
    } else if (!c.chain) {  // accumulating onto bytes already in L0C
        const std::size_t n = static_cast<std::size_t>(c.rows) * static_cast<std::size_t>(c.cols);
        auto base = std::make_shared<const std::vector<float>>(c.as<const float>(), c.as<const float>() + n);
        c.chain = std::make_shared<MatmulChain>(MatmulChain{c.rows, c.cols, std::move(base), {}});
    } else if (c.chain.use_count() > 1) {  // its value so far was stored: copy before appending
        c.chain = std::make_shared<MatmulChain>(*c.chain);
    }
    c.chain->terms.push_back(std::move(term));
}

}  // namespace

void TMATMUL(Tile& c, const Tile& a, const Tile& b) { matmul("TMATMUL", c, a, b, false); }
void TMATMUL_ACC(Tile& c, const Tile& a, const Tile& b) { matmul("TMATMUL_ACC", c, a, b, true); }

}  // namespace tandem
