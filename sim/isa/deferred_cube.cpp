#include "sim/isa/deferred_cube.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "sim/exec/block_ctx.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/element.hpp"
#include "sim/mem/fp16_widen.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

// Where element (r, c) of an R x C matrix lives in a buffer of the given storage order.
std::size_t storage_index(bool column_major, std::int64_t rows, std::int64_t cols, std::int64_t r, std::int64_t c) {
    return static_cast<std::size_t>(column_major ? c * rows + r : r * cols + c);
}

// Widen one operand into the R x C run buffer `out` (storage order `column_major`) at logical
// offset (r0, c0).
void widen_operand(const MatmulOperand& op, float* out, bool column_major, std::int64_t rows, std::int64_t cols,
                   std::int64_t r0, std::int64_t c0) {
    float* at = out + storage_index(column_major, rows, cols, r0, c0);
    const std::int64_t out_ld = column_major ? rows : cols;
    if (op.pin) {
        op.pin->widen(op.pin_row, op.pin_col, op.rows, op.cols, at, out_ld);
        return;
    }
    const std::byte* src = op.owned->data();
    const int runs = op.column_major ? op.cols : op.rows;
    const int len = op.column_major ? op.rows : op.cols;
    const std::size_t run_bytes = static_cast<std::size_t>(len) * static_cast<std::size_t>(dtype_bytes(op.dtype));
    for (int i = 0; i < runs; ++i)
        widen_to_float(op.dtype, src + static_cast<std::size_t>(i) * run_bytes, at + i * out_ld, static_cast<std::size_t>(len));
}

// Does `next` continue the run that starts at `first` and spans `k` along K, in GM? (a: the
// next columns of the same rows; b: the next rows of the same columns; both pinned, same
// allocation, layout and leading dimension.)
bool continues_in_gm(const MatmulOperand& first, const MatmulOperand& next, int k, bool along_cols) {
    if (!first.pin || !next.pin) return false;
    const GmTensor& f = first.pin->region();
    const GmTensor& n = next.pin->region();
    if (&f.allocation() != &n.allocation() || f.layout() != n.layout() || f.ld() != n.ld() || f.dtype() != n.dtype()) return false;
    if (along_cols ? next.rows != first.rows : next.cols != first.cols) return false;
    const std::int64_t expected = along_cols ? f.element_offset(first.pin_row, first.pin_col + k)
                                             : f.element_offset(first.pin_row + k, first.pin_col);
    return n.element_offset(next.pin_row, next.pin_col) == expected;
}


// The operands of terms [begin, end) (one operand side) as one widened rows x cols buffer in
// the first operand's storage order: when they are all pinned and their GM is unchanged, the
// region they cover widened straight from GM, or kept from an earlier product that read the same
// region (widen_gm_cached: the same values); else widened operand by operand into `buf`.
const float* widen_side(const std::vector<MatmulTerm>& terms, std::size_t begin, std::size_t end, bool side_a, int rows,
                        int cols, std::vector<float>& buf, WorkScratch& scratch) {
    const MatmulOperand& first = side_a ? terms[begin].a : terms[begin].b;
    const bool column_major = first.column_major;
    bool all_pinned = true;
    std::vector<std::shared_ptr<GmPin>> pins;
    pins.reserve(end - begin);
    for (std::size_t i = begin; i < end && all_pinned; ++i) {
        const MatmulOperand& op = side_a ? terms[i].a : terms[i].b;
        all_pinned = op.pin != nullptr;
        pins.push_back(op.pin);
    }
    if (all_pinned) {
        if (const float* cached = widen_gm_cached(run_region(first, rows, cols), pins, scratch)) return cached;
    }
    buf.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    std::int64_t k_at = 0;
    for (std::size_t i = begin; i < end; ++i) {
        const MatmulOperand& op = side_a ? terms[i].a : terms[i].b;
        widen_operand(op, buf.data(), column_major, rows, cols, side_a ? 0 : k_at, side_a ? k_at : 0);
        k_at += side_a ? op.cols : op.rows;
    }
    return buf.data();
}

}  // namespace

GmTensor run_region(const MatmulOperand& first, int rows, int cols) {
    const GmTensor& f = first.pin->region();
    return GmTensor(f.allocation(), f.element_offset(first.pin_row, first.pin_col), rows, cols, f.ld(), f.dtype(), f.layout());
}

TermRun term_run(const std::vector<MatmulTerm>& terms, std::size_t begin) {
    TermRun run{begin + 1, terms[begin].a.cols};
    const MatmulTerm& first = terms[begin];
    while (run.end < terms.size()) {
        const MatmulTerm& t = terms[run.end];
        if (t.a.column_major != first.a.column_major || t.b.column_major != first.b.column_major ||
            !continues_in_gm(first.a, t.a, run.k, true) || !continues_in_gm(first.b, t.b, run.k, false))
            break;
        run.k += t.a.cols;
        ++run.end;
    }
    return run;
}

namespace {

std::vector<std::byte> raw_bytes(const Tile& t) {
    const std::size_t n = static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.cols) *
                          static_cast<std::size_t>(dtype_bytes(t.dtype));
    std::vector<std::byte> v(n);
    std::memcpy(v.data(), t.data, n);
    return v;
}

}  // namespace

void evaluate_chain(const MatmulChain& chain, float* out, WorkScratch& scratch) {
    const std::size_t n_out = static_cast<std::size_t>(chain.rows) * static_cast<std::size_t>(chain.cols);
    const std::size_t cols = static_cast<std::size_t>(chain.cols);
    if (!chain.base) {
        if (chain.terms.empty()) std::fill(out, out + n_out, 0.0f);
    } else if (chain.base_shape == ChainBase::Full) {
        std::memcpy(out, chain.base->data(), n_out * sizeof(float));
    } else {  // a bias, broadcast
        const float* v = chain.base->data();
        for (std::size_t r = 0; r < static_cast<std::size_t>(chain.rows); ++r) {
            if (chain.base_shape == ChainBase::PerColumn) std::memcpy(out + r * cols, v, cols * sizeof(float));
            else std::fill(out + r * cols, out + (r + 1) * cols, v[r]);
        }
    }
    float beta = chain.base ? 1.0f : 0.0f;
    const auto& terms = chain.terms;
    for (std::size_t i = 0; i < terms.size();) {
        const TermRun run = term_run(terms, i);
        const int k = run.k;
        const std::size_t j = run.end;
        const MatmulOperand& a = terms[i].a;
        const MatmulOperand& b = terms[i].b;
        const float* a_values = widen_side(terms, i, j, true, chain.rows, k, scratch.a, scratch);
        const float* b_values = widen_side(terms, i, j, false, k, chain.cols, scratch.b, scratch);
        // Operands keep their storage order; BLAS reads a column-major one as the transpose of
        // its row-major storage.
        cblas_sgemm(CblasRowMajor, a.column_major ? CblasTrans : CblasNoTrans, b.column_major ? CblasTrans : CblasNoTrans,
                    chain.rows, chain.cols, k, 1.0f, a_values, a.column_major ? chain.rows : k, b_values,
                    b.column_major ? k : chain.cols, beta, out, chain.cols);
        beta = 1.0f;
        i = j;
    }
}

MatmulOperand operand_of(const Tile& t) {
    MatmulOperand op;
    op.rows = t.rows;
    op.cols = t.cols;
    op.column_major = t.column_major;
    op.dtype = t.dtype;
    if (t.pin) {
        op.pin = t.pin;
        op.pin_row = t.pin_row;
        op.pin_col = t.pin_col;
    } else {
        op.owned = std::make_shared<const std::vector<std::byte>>(raw_bytes(t));
    }
    return op;
}

std::vector<float> tile_values(const Tile& t) {
    const std::size_t n = static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.cols);
    const std::size_t es = static_cast<std::size_t>(dtype_bytes(t.dtype));
    std::vector<std::byte> raw(n * es);
    bool column_major = t.column_major;
    if (t.pin) {
        t.pin->copy_raw(t.pin_row, t.pin_col, t.rows, t.cols, raw.data());
        column_major = t.pin->region().layout() == Layout::DN;
    } else {
        std::memcpy(raw.data(), t.data, raw.size());
    }
    std::vector<float> v(n);
    for (std::size_t r = 0; r < static_cast<std::size_t>(t.rows); ++r) {
        for (std::size_t c = 0; c < static_cast<std::size_t>(t.cols); ++c) {
            const std::size_t i = column_major ? c * static_cast<std::size_t>(t.rows) + r : r * static_cast<std::size_t>(t.cols) + c;
            v[r * static_cast<std::size_t>(t.cols) + c] = load_as_float(raw.data() + i * es, t.dtype);
        }
    }
    return v;
}

void materialize(const Tile& t) {
    if (t.pin) {
        t.pin->copy_raw(t.pin_row, t.pin_col, t.rows, t.cols, t.data);
        t.pin.reset();
    }
    if (t.chain) {
        evaluate_chain(*t.chain, t.as<float>(), t.owner->lp().work_scratch());
        t.chain.reset();
    }
}

DeferredMatmulStore::DeferredMatmulStore(const GmTensor& dst, std::shared_ptr<const MatmulChain> chain)
    : PendingGmWrite(dst), chain_(std::move(chain)) {}

void DeferredMatmulStore::run(WorkScratch& scratch) {
    const GmTensor& dst = destination();
    if (dst.dtype() != DType::F32 && dst.dtype() != DType::F16 && dst.dtype() != DType::BF16)
        throw SimError("internal: a deferred accumulator store must target fp32, fp16 or bf16 GM");
    scratch.c.resize(static_cast<std::size_t>(chain_->rows) * static_cast<std::size_t>(chain_->cols));
    evaluate_chain(*chain_, scratch.c.data(), scratch);
    write_destination([&] {
        const float* v = scratch.c.data();
        if (dst.dtype() != DType::F32 && dst.layout() == Layout::ND) {  // the FIX pipe's cast, a row at a time
            for (int r = 0; r < chain_->rows; ++r)
                narrow_16bit(dst.dtype(), v + static_cast<std::size_t>(r) * chain_->cols,
                             reinterpret_cast<std::uint16_t*>(dst.element_ptr(r, 0)), static_cast<std::size_t>(chain_->cols));
            return;
        }
        if (dst.dtype() != DType::F32) {  // the FIX pipe's cast, element by element
            for (int r = 0; r < chain_->rows; ++r)
                for (int c = 0; c < chain_->cols; ++c)
                    store_from_float(dst.element_ptr(r, c), dst.dtype(), v[static_cast<std::size_t>(r) * chain_->cols + c]);
            return;
        }
        if (dst.layout() == Layout::ND) {
            for (int r = 0; r < chain_->rows; ++r)
                std::memcpy(dst.element_ptr(r, 0), v + static_cast<std::size_t>(r) * chain_->cols, chain_->cols * sizeof(float));
            return;
        }
        for (int r = 0; r < chain_->rows; ++r)
            for (int c = 0; c < chain_->cols; ++c)
                std::memcpy(dst.element_ptr(r, c), v + static_cast<std::size_t>(r) * chain_->cols + c, sizeof(float));
    });
}

}  // namespace tandem
