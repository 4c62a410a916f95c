// TMATMUL / TMATMUL_ACC / TMATMUL_BIAS on the cube (PIPE_M). Functionally: fp16, bf16 or fp32
// operands widened (exactly) to fp32 and multiplied by OpenBLAS, accumulating in fp32 like the
// cube's L0C (int8 operands: exact int32 sums, computed at once);
// deferred as a term of the accumulator's chain (sim/isa/deferred_cube.hpp). A bias is the
// chain's base, broadcast over the rows (1 x n, Ascend's bias table) or the columns (m x 1).
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
    const bool int8 = a.dtype == DType::I8;
    const bool operands_ok = (is_float_dtype(a.dtype) || int8) && b.dtype == a.dtype;
    if (!operands_ok || c.dtype != (int8 ? DType::I32 : DType::F32)) {
        throw SimError(fmt::format("{}: the cube takes fp16, bf16 or fp32 a and b (both the same) and accumulates fp32 c, "
                                   "or int8 a and b into int32 c; got "
                                   "a '{}' {}, b '{}' {}, c '{}' {}",
                                   instr, a.name, dtype_name(a.dtype), b.name, dtype_name(b.dtype), c.name,
                                   dtype_name(c.dtype)));
    }
    if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
        throw SimError(fmt::format("{}: shapes do not chain: c '{}' {}x{} = a '{}' {}x{} * b '{}' {}x{}", instr, c.name,
                                   c.rows, c.cols, a.name, a.rows, a.cols, b.name, b.rows, b.cols));
    }
}

// The bias of TMATMUL_BIAS: an L1 tile of 1 x n (per column) or m x 1 (per row).
ChainBase check_bias(const Tile& c, const Tile& bias) {
    if (bias.kind != MemKind::L1 || !is_float_dtype(bias.dtype)) {
        throw SimError(fmt::format("TMATMUL_BIAS: bias '{}' must be an fp32, fp16 or bf16 tile in L1, got {} in {}", bias.name,
                                   dtype_name(bias.dtype), mem_kind_name(bias.kind)));
    }
    if (bias.rows == 1 && bias.cols == c.cols) return ChainBase::PerColumn;
    if (bias.rows == c.rows && bias.cols == 1) return ChainBase::PerRow;
    throw SimError(fmt::format("TMATMUL_BIAS: bias '{}' is {}x{}; for a {}x{} accumulator it must be 1x{} (per column) or "
                               "{}x1 (per row)",
                               bias.name, bias.rows, bias.cols, c.rows, c.cols, c.cols, c.rows));
}

enum class Mode { Set, Accumulate, Bias };

void matmul(const char* instr, Tile& c, const Tile& a, const Tile& b, Mode mode, const Tile* bias = nullptr) {
    BlockCtx& blk = *c.owner;
    blk.current_instr = instr;
    blk.require_pipe(Pipe::M, instr);
    check_operands(instr, c, a, b);
    const ChainBase bias_shape = bias != nullptr ? check_bias(c, *bias) : ChainBase::Full;
    const bool accumulate = mode == Mode::Accumulate;
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    const SimTime start = blk.pipe_start(Pipe::M, issue);
    for (const Tile* in : {&a, &b, bias}) {
        if (in != nullptr && in->write_end > start) {
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
    const bool int8 = a.dtype == DType::I8;
    if (int8 && bias != nullptr) throw SimError(fmt::format("{}: no bias with int8 operands", instr));
    const SimTime end = start + blk.cost_memo().cube_ps(cost, a.rows, a.cols, b.cols, a.dtype);
    blk.now_ref() = issue;
    blk.occupy(Pipe::M, start, end);
    const_cast<Tile&>(a).read_end = std::max(a.read_end, end);
    const_cast<Tile&>(b).read_end = std::max(b.read_end, end);
    if (bias != nullptr) const_cast<Tile*>(bias)->read_end = std::max(bias->read_end, end);
    c.write_end = end;
    c.last_writer = instr;
    const std::int64_t flops = 2LL * a.rows * a.cols * b.cols;
    const Opcode op = mode == Mode::Set ? Opcode::TMATMUL : (accumulate ? Opcode::TMATMUL_ACC : Opcode::TMATMUL_BIAS);
    isa_detail::record(blk, Pipe::M, op, start, end, isa_detail::RecordArgs{flops});
    if (!blk.functional()) return;
    if (c.column_major) throw SimError(fmt::format("{}: accumulator '{}' must be row-major", instr, c.name));
    if (int8) {
        // Exact integer sums, computed now: c (+)= a * b in int32 (wider sums wrap as int32 does).
        materialize(a);
        materialize(b);
        materialize(c);
        const auto* ad = reinterpret_cast<const std::int8_t*>(a.data);
        const auto* bd = reinterpret_cast<const std::int8_t*>(b.data);
        auto* cd = c.as<std::int32_t>();
        const int m = a.rows, k = a.cols, n = b.cols;
        auto at = [&](int i, int p) { return static_cast<std::int32_t>(a.column_major ? ad[std::size_t(p) * m + i] : ad[std::size_t(i) * k + p]); };
        auto bt = [&](int p, int j) { return static_cast<std::int32_t>(b.column_major ? bd[std::size_t(j) * k + p] : bd[std::size_t(p) * n + j]); };
        std::vector<std::int32_t> brow(static_cast<std::size_t>(n));
        if (!accumulate) std::fill(cd, cd + std::size_t(m) * n, 0);
        for (int p = 0; p < k; ++p) {
            for (int j = 0; j < n; ++j) brow[std::size_t(j)] = bt(p, j);
            for (int i = 0; i < m; ++i) {
                const std::int32_t av = at(i, p);
                if (av == 0) continue;
                std::int32_t* crow = cd + std::size_t(i) * n;
                for (int j = 0; j < n; ++j)
                    crow[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(crow[j]) + static_cast<std::uint32_t>(av * brow[std::size_t(j)]));
            }
        }
        return;
    }
    // Deferred (sim/isa/deferred_cube.hpp): the product is a term of the accumulator's chain.
    MatmulTerm term{operand_of(a), operand_of(b)};
    if (bias != nullptr) {  // the bias's values as the cube reads them now, broadcast when evaluated
        auto values = std::make_shared<const std::vector<float>>(tile_values(*bias));
        c.chain = std::make_shared<MatmulChain>(MatmulChain{c.rows, c.cols, std::move(values), {}, bias_shape});
    } else if (!accumulate) {
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

void TMATMUL(Tile& c, const Tile& a, const Tile& b) { matmul("TMATMUL", c, a, b, Mode::Set); }
void TMATMUL_ACC(Tile& c, const Tile& a, const Tile& b) { matmul("TMATMUL_ACC", c, a, b, Mode::Accumulate); }
void TMATMUL_BIAS(Tile& c, const Tile& a, const Tile& b, const Tile& bias) {
    matmul("TMATMUL_BIAS", c, a, b, Mode::Bias, &bias);
}

}  // namespace tandem
