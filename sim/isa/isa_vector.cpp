// The vector unit (PIPE_V, AIV cores) on UB tiles: TADD, TADDS, TMULS, TCVT, TMOV, TADD_ROWVEC,
// TADD_COLVEC.
//
// Timing: one instruction costs vector_startup_cycles + ceil(bytes / vector_bytes_per_cycle)
// cycles, bytes counted over the widest operand tile (for TCVT, the wider of source and
// destination). Functionally each result is computed in float from the operands' exact values
// and rounded once to the destination's dtype (round to nearest, ties to even), which is what
// computing in the tile's dtype gives: float holds the exact sum or product of two fp16 or bf16
// values (or rounds it correctly for fp32), so rounding it again to the 16-bit type is the
// correctly rounded result in that type. A scalar operand is first rounded to the tile's dtype,
// as the hardware takes it in that dtype.
#include <algorithm>
#include <cmath>
#include <utility>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "sim/isa/hazard.hpp"
#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/mem/element.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

std::size_t count_of(const Tile& t) { return static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.cols); }

// Storage index of element (r, c).
std::size_t index_of(const Tile& t, std::size_t r, std::size_t c) {
    return t.column_major ? c * static_cast<std::size_t>(t.rows) + r : r * static_cast<std::size_t>(t.cols) + c;
}

void check_ub(const char* instr, const BlockCtx& blk, const Tile& t, bool any_dtype = false) {
    if (t.kind != MemKind::UB) {
        throw SimError(fmt::format("{}: tile '{}' is in {}; the vector unit works on UB tiles", instr, t.name,
                                   mem_kind_name(t.kind)));
    }
    if (t.owner != &blk) {
        throw SimError(fmt::format("{}: tile '{}' belongs to another block", instr, t.name));
    }
    if (!is_float_dtype(t.dtype) && !(any_dtype && t.dtype == DType::I8)) {
        throw SimError(fmt::format("{}: tile '{}' is {}; the vector instructions take fp32, fp16 or bf16", instr,
                                   t.name, dtype_name(t.dtype)));
    }
}

void check_same_shape(const char* instr, const Tile& dst, const Tile& src) {
    if (dst.rows != src.rows || dst.cols != src.cols) {
        throw SimError(fmt::format("{}: tile '{}' is {}x{} but tile '{}' is {}x{} (operands must have the same shape)",
                                   instr, dst.name, dst.rows, dst.cols, src.name, src.rows, src.cols));
    }
}

void check_same_dtype(const char* instr, const Tile& dst, const Tile& src) {
    if (dst.dtype != src.dtype) {
        throw SimError(fmt::format("{}: tile '{}' is {} but tile '{}' is {} (use TCVT to convert)", instr, dst.name,
                                   dtype_name(dst.dtype), src.name, dtype_name(src.dtype)));
    }
}

// Issues one vector instruction: checks hazards, books PIPE_V, records it. Returns whether the
// block moves data (functional).
// How an instruction is costed: one pass (an add), one pass of transcendental work (exp,
// divide), or `passes` passes of the sort unit over `sort_elements` keys (a sort's rounds).
struct VecCost {
    bool transcendental = false;
    int passes = 1;
    bool any_dtype = false;  // TCVT: int8 operands allowed
    std::int64_t sort_elements = 0;
};

bool issue(const char* instr, Opcode op, Tile& dst, std::initializer_list<const Tile*> srcs, VecCost how = {}) {
    BlockCtx& blk = *dst.owner;
    blk.current_instr = instr;
    blk.require_pipe(Pipe::V, instr);
    check_ub(instr, blk, dst, how.any_dtype);
    std::int64_t bytes = dst.bytes();
    for (const Tile* s : srcs) {
        check_ub(instr, blk, *s, how.any_dtype);
        bytes = std::max(bytes, s->bytes());
    }
    const CostModel& cost = blk.cost();
    const SimTime issue_at = blk.now() + cost.issue_ps;
    const SimTime start = blk.pipe_start(Pipe::V, issue_at);
    for (const Tile* s : srcs) isa_detail::check_hazard(instr, *s, start, false);
    isa_detail::check_hazard(instr, dst, start, true);
    const SimTime one = how.sort_elements > 0 ? cost.vector_sort_pass_ps(how.sort_elements)
                        : how.transcendental  ? cost.vector_transcendental_ps(bytes)
                                              : cost.vector_ps(bytes);
    const SimTime end = start + one * how.passes;
    blk.now_ref() = issue_at;
    blk.occupy(Pipe::V, start, end);
    for (const Tile* s : srcs) const_cast<Tile*>(s)->read_end = std::max(s->read_end, end);
    dst.write_end = end;
    dst.last_writer = instr;
    isa_detail::record(blk, Pipe::V, op, start, end, isa_detail::RecordArgs{bytes});
    return blk.functional();
}

// dst = f(src) element by element in storage order (dst takes src's order); D is dst's dtype,
// S src's. dst is src itself only when D == S (a tile has one dtype).
template <DType D, DType S, class F>
void map_unary(Tile& dst, const Tile& src, F f) {
    const std::size_t n = count_of(src);
    const std::size_t ds = static_cast<std::size_t>(dtype_bytes(D));
    const std::size_t ss = static_cast<std::size_t>(dtype_bytes(S));
    // In place (dst is src) is fine: each element is read before it is written.
    for (std::size_t i = 0; i < n; ++i) store_from_float<D>(dst.data + i * ds, f(load_as_float<S>(src.data + i * ss)));
    dst.column_major = src.column_major;
}

template <DType T, class F>
void map_unary_same(Tile& dst, const Tile& src, F f) {
    map_unary<T, T>(dst, src, f);
}

}  // namespace

void TADD(Tile& dst, const Tile& a, const Tile& b) {
    check_same_shape("TADD", dst, a);
    check_same_shape("TADD", dst, b);
    check_same_dtype("TADD", dst, a);
    check_same_dtype("TADD", dst, b);
    if (!issue("TADD", Opcode::TADD, dst, {&a, &b})) return;
    dispatch_float_dtype(dst.dtype, [&]<DType T>() {
        const std::size_t es = static_cast<std::size_t>(dtype_bytes(T));
        const std::size_t n = count_of(dst);
        if (a.column_major == b.column_major) {
            for (std::size_t i = 0; i < n; ++i)
                store_from_float<T>(dst.data + i * es, load_as_float<T>(a.data + i * es) + load_as_float<T>(b.data + i * es));
            dst.column_major = a.column_major;
            return;
        }
        // Different storage orders: b read by (row, col); computed aside if dst is b.
        std::vector<std::byte> out(n * es);
        for (std::size_t r = 0; r < static_cast<std::size_t>(dst.rows); ++r) {
            for (std::size_t c = 0; c < static_cast<std::size_t>(dst.cols); ++c) {
                const std::size_t ia = index_of(a, r, c);
                store_from_float<T>(out.data() + ia * es,
                                    load_as_float<T>(a.data + ia * es) + load_as_float<T>(b.data + index_of(b, r, c) * es));
            }
        }
        std::memcpy(dst.data, out.data(), out.size());
        dst.column_major = a.column_major;
    });
}

void TADDS(Tile& dst, const Tile& src, float s) {
    check_same_shape("TADDS", dst, src);
    check_same_dtype("TADDS", dst, src);
    if (!issue("TADDS", Opcode::TADDS, dst, {&src})) return;
    const float sv = round_to(dst.dtype, s);
    dispatch_float_dtype(dst.dtype, [&]<DType T>() { map_unary_same<T>(dst, src, [sv](float x) { return x + sv; }); });
}

void TMULS(Tile& dst, const Tile& src, float s) {
    check_same_shape("TMULS", dst, src);
    check_same_dtype("TMULS", dst, src);
    if (!issue("TMULS", Opcode::TMULS, dst, {&src})) return;
    const float sv = round_to(dst.dtype, s);
    dispatch_float_dtype(dst.dtype, [&]<DType T>() { map_unary_same<T>(dst, src, [sv](float x) { return x * sv; }); });
}

void TCVT(Tile& dst, const Tile& src) {
    check_same_shape("TCVT", dst, src);
    if (!issue("TCVT", Opcode::TCVT, dst, {&src}, VecCost{false, 1, true})) return;
    if (&dst == &src) return;  // one tile has one dtype: nothing to convert
    if (dst.dtype == DType::I8 || src.dtype == DType::I8) {
        const std::size_t n = count_of(src);
        const std::size_t ds = static_cast<std::size_t>(dtype_bytes(dst.dtype));
        const std::size_t ss = static_cast<std::size_t>(dtype_bytes(src.dtype));
        for (std::size_t i = 0; i < n; ++i) store_from_float(dst.data + i * ds, dst.dtype, load_as_float(src.data + i * ss, src.dtype));
        dst.column_major = src.column_major;
        return;
    }
    dispatch_float_dtype(dst.dtype, [&]<DType D>() {
        dispatch_float_dtype(src.dtype, [&]<DType S>() { map_unary<D, S>(dst, src, [](float x) { return x; }); });
    });
}

void TMOV(Tile& dst, const Tile& src) {
    check_same_shape("TMOV", dst, src);
    check_same_dtype("TMOV", dst, src);
    if (!issue("TMOV", Opcode::TMOV, dst, {&src})) return;
    if (&dst == &src) return;
    std::memcpy(dst.data, src.data, static_cast<std::size_t>(src.bytes()));
    dst.column_major = src.column_major;
}

namespace {

// dst[i][j] = src[i][j] + vec[j] (per_col) or + vec[i]; dst takes src's storage order.
void add_vec(const char* instr, Opcode op, Tile& dst, const Tile& src, const Tile& vec, bool per_col) {
    check_same_shape(instr, dst, src);
    check_same_dtype(instr, dst, src);
    check_same_dtype(instr, dst, vec);
    const bool shape_ok = per_col ? vec.rows == 1 && vec.cols == src.cols : vec.rows == src.rows && vec.cols == 1;
    if (!shape_ok) {
        throw SimError(fmt::format("{}: vector tile '{}' is {}x{}; for a {}x{} tile it must be {}", instr, vec.name,
                                   vec.rows, vec.cols, src.rows, src.cols,
                                   per_col ? fmt::format("1x{}", src.cols) : fmt::format("{}x1", src.rows)));
    }
    if (!issue(instr, op, dst, {&src, &vec})) return;
    // A 1 x n or n x 1 tile is the same in either storage order: vec[k] is element k.
    std::vector<std::byte> vcopy(vec.data, vec.data + vec.bytes());  // dst may be vec itself
    dispatch_float_dtype(dst.dtype, [&]<DType T>() {
        const std::size_t es = static_cast<std::size_t>(dtype_bytes(T));
        const std::size_t rows = static_cast<std::size_t>(src.rows), cols = static_cast<std::size_t>(src.cols);
        const std::size_t outer = src.column_major ? cols : rows;
        const std::size_t inner = src.column_major ? rows : cols;
        // Storage run i holds row i (row-major) or column i (column-major).
        const bool vec_by_inner = per_col != src.column_major;
        for (std::size_t i = 0; i < outer; ++i) {
            for (std::size_t j = 0; j < inner; ++j) {
                const std::size_t at = (i * inner + j) * es;
                const float v = load_as_float<T>(vcopy.data() + (vec_by_inner ? j : i) * es);
                store_from_float<T>(dst.data + at, load_as_float<T>(src.data + at) + v);
            }
        }
        dst.column_major = src.column_major;
    });
}

}  // namespace

void TADD_ROWVEC(Tile& dst, const Tile& src, const Tile& vec) {
    add_vec("TADD_ROWVEC", Opcode::TADD_ROWVEC, dst, src, vec, true);
}

void TADD_COLVEC(Tile& dst, const Tile& src, const Tile& vec) {
    add_vec("TADD_COLVEC", Opcode::TADD_COLVEC, dst, src, vec, false);
}

namespace {

// dst = f(a, b) element by element (same shapes, dtypes and storage order).
template <class F>
void binary(const char* instr, Opcode op, Tile& dst, const Tile& a, const Tile& b, VecCost how, F f) {
    check_same_shape(instr, dst, a);
    check_same_shape(instr, dst, b);
    check_same_dtype(instr, dst, a);
    check_same_dtype(instr, dst, b);
    if (a.column_major != b.column_major)
        throw SimError(fmt::format("{}: tiles '{}' and '{}' are stored in different orders", instr, a.name, b.name));
    if (!issue(instr, op, dst, {&a, &b}, how)) return;
    dispatch_float_dtype(dst.dtype, [&]<DType T>() {
        const std::size_t es = static_cast<std::size_t>(dtype_bytes(T));
        for (std::size_t i = 0; i < count_of(dst); ++i)
            store_from_float<T>(dst.data + i * es, f(load_as_float<T>(a.data + i * es), load_as_float<T>(b.data + i * es)));
        dst.column_major = a.column_major;
    });
}

template <class F>
void unary(const char* instr, Opcode op, Tile& dst, const Tile& src, VecCost how, F f) {
    check_same_shape(instr, dst, src);
    check_same_dtype(instr, dst, src);
    if (!issue(instr, op, dst, {&src}, how)) return;
    dispatch_float_dtype(dst.dtype, [&]<DType T>() { map_unary_same<T>(dst, src, f); });
}

}  // namespace

void TMUL(Tile& dst, const Tile& a, const Tile& b) {
    binary("TMUL", Opcode::TMUL, dst, a, b, VecCost{}, [](float x, float y) { return x * y; });
}
void TDIV(Tile& dst, const Tile& a, const Tile& b) {
    binary("TDIV", Opcode::TDIV, dst, a, b, VecCost{true}, [](float x, float y) { return x / y; });
}
void TEXP(Tile& dst, const Tile& src) {
    unary("TEXP", Opcode::TEXP, dst, src, VecCost{true}, [](float x) { return std::exp(x); });
}
void TABS(Tile& dst, const Tile& src) {
    unary("TABS", Opcode::TABS, dst, src, VecCost{}, [](float x) { return std::fabs(x); });
}

void TROWMAX(Tile& dst, const Tile& src) {
    check_same_dtype("TROWMAX", dst, src);
    if (dst.rows != src.rows || dst.cols != 1) {
        throw SimError(fmt::format("TROWMAX: destination '{}' is {}x{}; for a {}x{} source it must be {}x1", dst.name,
                                   dst.rows, dst.cols, src.rows, src.cols, src.rows));
    }
    if (!issue("TROWMAX", Opcode::TROWMAX, dst, {&src})) return;
    dispatch_float_dtype(dst.dtype, [&]<DType T>() {
        const std::size_t es = static_cast<std::size_t>(dtype_bytes(T));
        for (std::size_t r = 0; r < static_cast<std::size_t>(src.rows); ++r) {
            float m = load_as_float<T>(src.data + index_of(src, r, 0) * es);
            for (std::size_t c = 1; c < static_cast<std::size_t>(src.cols); ++c)
                m = std::max(m, load_as_float<T>(src.data + index_of(src, r, c) * es));
            store_from_float<T>(dst.data + r * es, m);
        }
    });
}

void TROWEXPANDMUL(Tile& dst, const Tile& src, const Tile& vec) {
    check_same_shape("TROWEXPANDMUL", dst, src);
    check_same_dtype("TROWEXPANDMUL", dst, src);
    check_same_dtype("TROWEXPANDMUL", dst, vec);
    if (vec.rows != src.rows || vec.cols != 1) {
        throw SimError(fmt::format("TROWEXPANDMUL: vector tile '{}' is {}x{}; for a {}x{} tile it must be {}x1", vec.name,
                                   vec.rows, vec.cols, src.rows, src.cols, src.rows));
    }
    if (!issue("TROWEXPANDMUL", Opcode::TROWEXPANDMUL, dst, {&src, &vec})) return;
    std::vector<std::byte> vcopy(vec.data, vec.data + vec.bytes());  // dst may be vec itself
    dispatch_float_dtype(dst.dtype, [&]<DType T>() {
        const std::size_t es = static_cast<std::size_t>(dtype_bytes(T));
        for (std::size_t r = 0; r < static_cast<std::size_t>(src.rows); ++r) {
            const float v = load_as_float<T>(vcopy.data() + r * es);
            for (std::size_t c = 0; c < static_cast<std::size_t>(src.cols); ++c) {
                const std::size_t i = index_of(src, r, c);
                store_from_float<T>(dst.data + i * es, load_as_float<T>(src.data + i * es) * v);
            }
        }
        dst.column_major = src.column_major;
    });
}

namespace {
// TSORT and TMRGSORT: `passes` passes of the sort unit over the n keys with their idx (each
// vector_sort_cycles_per_element per element); keys sorted in place (descending, stable), idx
// the original positions.
void sort_keys(const char* name, Opcode op, Tile& keys, Tile& idx, int passes) {
    if (keys.rows != 1 || idx.rows != 1 || keys.cols != idx.cols || keys.dtype != DType::F32 || idx.dtype != DType::F32) {
        throw SimError(fmt::format("{}: keys '{}' and idx '{}' must both be fp32 tiles of 1 x n with the same n", name, keys.name,
                                   idx.name));
    }
    if (!issue(name, op, idx, {&keys}, VecCost{false, passes, false, keys.cols})) return;
    // The sort also writes `keys` (in place): it ends when idx does.
    keys.write_end = idx.write_end;
    keys.last_writer = name;
    const std::size_t n = static_cast<std::size_t>(keys.cols);
    std::vector<std::pair<float, std::size_t>> v(n);
    const float* k = keys.as<const float>();
    for (std::size_t i = 0; i < n; ++i) v[i] = {k[i], i};
    std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    float* ko = keys.as<float>();
    float* io = idx.as<float>();
    for (std::size_t i = 0; i < n; ++i) {
        ko[i] = v[i].first;
        io[i] = static_cast<float>(v[i].second);
    }
}
}  // namespace

void TSORT(Tile& keys, Tile& idx) {
    // A 32-element block sort, then 4-way merge rounds until one run is left.
    int passes = 1;
    for (std::int64_t runs = (keys.cols + 31) / 32; runs > 1; runs = (runs + 3) / 4) ++passes;
    sort_keys("TSORT", Opcode::TSORT, keys, idx, passes);
}

void TMRGSORT(Tile& keys, Tile& idx) { sort_keys("TMRGSORT", Opcode::TMRGSORT, keys, idx, 1); }

}  // namespace tandem
