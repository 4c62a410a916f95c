#include "sim/isa/deferred_drain.hpp"

#include <cblas.h>

#include <algorithm>
#include <functional>

#include "sim/isa/deferred_cube.hpp"
#include "sim/mem/zeroed_buffer.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {

// A batch is cut into bands of whole output row blocks of at most this many rows (one sgemm
// each): large enough to amortise OpenBLAS's packing, small enough to spread over the cores
// and leave little idle time at the end.
constexpr int kBandRows = 512;
// B is widened in pieces of about this many elements, in parallel.
constexpr std::int64_t kWidenPieceElements = std::int64_t{1} << 20;

// One store that is a single product: dst (rows x cols) = a (rows x k) * b (k x cols).
struct Product {
    std::shared_ptr<PendingGmWrite> write;
    GmTensor a, b, dst;
    std::vector<const GmPin*> a_pins, b_pins;
};

// Products stacked into one: `blocks[i]` are the products of output row block i (left to right).
struct Batch {
    GmTensor a, b, dst;
    std::vector<std::vector<Product*>> blocks;
    std::vector<int> block_rows;
    ZeroedBuffer b_widened_bytes;      // B as fp32 (every element written before it is read: no zero-fill)
    float* b_widened() { return reinterpret_cast<float*>(b_widened_bytes.data()); }
    std::vector<const GmPin*> b_pins;  // every member's B pins
    std::vector<char> b_piece_ok;      // per widened piece: were its regions unchanged?
    bool b_ok = true;
};

// Does `next` (rows x cols) sit right below (`down`) or right of `cur` in the same matrix?
bool adjacent(const GmTensor& cur, const GmTensor& next, bool down) {
    if (&cur.allocation() != &next.allocation() || cur.ld() != next.ld() || cur.layout() != next.layout() ||
        cur.dtype() != next.dtype())
        return false;
    if (down ? next.cols() != cur.cols() : next.rows() != cur.rows()) return false;
    return next.offset_bytes() == (down ? cur.element_offset(cur.rows(), 0) : cur.element_offset(0, cur.cols()));
}

GmTensor grown(const GmTensor& t, int rows, int cols) {
    return GmTensor(t.allocation(), t.offset_bytes(), rows, cols, t.ld(), t.dtype(), t.layout());
}

// The store as one product, if it is one (no initial accumulator, every term pinned and the
// terms one run in GM, fp32 row-major destination).
bool as_product(const std::shared_ptr<PendingGmWrite>& w, Product& p) {
    const auto* store = dynamic_cast<const DeferredMatmulStore*>(w.get());
    if (store == nullptr) return false;
    const MatmulChain& ch = store->chain();
    if (ch.base || ch.terms.empty() || !ch.terms.front().a.pin || !ch.terms.front().b.pin) return false;
    const TermRun run = term_run(ch.terms, 0);
    if (run.end != ch.terms.size()) return false;
    const GmTensor& dst = store->destination();
    if (dst.layout() != Layout::ND || dst.dtype() != DType::F32) return false;
    p.write = w;
    p.a = run_region(ch.terms.front().a, ch.rows, run.k);
    p.b = run_region(ch.terms.front().b, run.k, ch.cols);
    p.dst = dst;
    for (const MatmulTerm& t : ch.terms) {
        p.a_pins.push_back(t.a.pin.get());
        p.b_pins.push_back(t.b.pin.get());
    }
    return true;
}

// Stack products into batches: first down (same B, A and dst row blocks adjacent), then across
// (same A rows, B and dst column blocks adjacent).
std::vector<Batch> make_batches(std::vector<Product>& products) {
    std::vector<Product*> order;
    for (Product& p : products) order.push_back(&p);
    auto key = [](const GmTensor& t) { return std::make_pair(reinterpret_cast<std::uintptr_t>(&t.allocation()), t.offset_bytes()); };
    std::stable_sort(order.begin(), order.end(), [&](const Product* x, const Product* y) {
        if (key(x->b) != key(y->b)) return key(x->b) < key(y->b);
        return key(x->a) < key(y->a);
    });
    struct Strip {
        GmTensor a, b, dst;
        std::vector<Product*> members;
    };
    std::vector<Strip> strips;
    for (Product* p : order) {
        if (!strips.empty()) {
            Strip& s = strips.back();
            if (s.b.same_region(p->b) && adjacent(s.a, p->a, true) && adjacent(s.dst, p->dst, true)) {
                s.a = grown(s.a, s.a.rows() + p->a.rows(), s.a.cols());
                s.dst = grown(s.dst, s.dst.rows() + p->dst.rows(), s.dst.cols());
                s.members.push_back(p);
                continue;
            }
        }
        strips.push_back(Strip{p->a, p->b, p->dst, {p}});
    }
    std::stable_sort(strips.begin(), strips.end(), [&](const Strip& x, const Strip& y) {
        if (key(x.a) != key(y.a)) return key(x.a) < key(y.a);
        if (x.a.rows() != y.a.rows()) return x.a.rows() < y.a.rows();
        return key(x.b) < key(y.b);
    });
    std::vector<Batch> batches;
    const Strip* prev = nullptr;
    for (const Strip& s : strips) {
        bool joins = prev != nullptr && prev->a.same_region(s.a) && adjacent(batches.back().b, s.b, false) &&
                     adjacent(batches.back().dst, s.dst, false) && batches.back().blocks.size() == s.members.size();
        for (std::size_t i = 0; joins && i < s.members.size(); ++i) joins = s.members[i]->a.rows() == batches.back().block_rows[i];
        if (joins) {
            Batch& b = batches.back();
            b.b = grown(b.b, b.b.rows(), b.b.cols() + s.b.cols());
            b.dst = grown(b.dst, b.dst.rows(), b.dst.cols() + s.dst.cols());
            for (std::size_t i = 0; i < s.members.size(); ++i) b.blocks[i].push_back(s.members[i]);
        } else {
            Batch b{s.a, s.b, s.dst, {}, {}, {}, {}, {}, true};
            for (Product* p : s.members) {
                b.blocks.push_back({p});
                b.block_rows.push_back(p->a.rows());
            }
            batches.push_back(std::move(b));
        }
        prev = &s;
    }
    return batches;
}

std::vector<const GmPin*> pins_of(const std::vector<Product*>& row_block, bool side_a) {
    std::vector<const GmPin*> pins;
    for (const Product* p : row_block)
        for (const GmPin* pin : side_a ? p->a_pins : p->b_pins) pins.push_back(pin);
    return pins;
}

// Rows [row0, row0 + rows) of the batch, blocks [first, last): one sgemm into GM, or (if some
// operand changed in GM since it was loaded) each store on its own.
void compute_band(Batch& batch, std::size_t first, std::size_t last, int row0, int rows, WorkScratch& scratch) {
    const int k = batch.a.cols();
    const int n = batch.b.cols();
    bool ok = batch.b_ok;
    if (ok) {
        std::vector<const GmPin*> pins;
        for (std::size_t i = first; i < last; ++i) {
            auto block_pins = pins_of(batch.blocks[i], true);
            pins.insert(pins.end(), block_pins.begin(), block_pins.end());
        }
        const GmTensor a = GmTensor(batch.a.allocation(), batch.a.element_offset(row0, 0), rows, k, batch.a.ld(),
                                    batch.a.dtype(), batch.a.layout());
        const bool a_cm = a.layout() == Layout::DN;
        scratch.a.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(k));
        ok = widen_gm_if_unchanged(a, pins, scratch.a.data(), a_cm ? rows : k);
        if (ok) {
            const bool b_cm = batch.b.layout() == Layout::DN;
            float* c = reinterpret_cast<float*>(batch.dst.element_ptr(row0, 0));
            cblas_sgemm(CblasRowMajor, a_cm ? CblasTrans : CblasNoTrans, b_cm ? CblasTrans : CblasNoTrans, rows, n, k, 1.0f,
                        scratch.a.data(), a_cm ? rows : k, batch.b_widened(), b_cm ? k : n, 0.0f, c,
                        static_cast<int>(batch.dst.ld()));
        }
    }
    for (std::size_t i = first; i < last; ++i) {
        for (Product* p : batch.blocks[i]) {
            if (ok) p->write->finish_claimed();
            else p->write->run_claimed(scratch);
        }
    }
}

}  // namespace

void complete_deferred_writes(const std::vector<std::shared_ptr<PendingGmWrite>>& writes, WorkerPool& pool) {
    std::vector<Product> products;
    products.reserve(writes.size());
    std::vector<WorkerPool::TaskFn> singles;
    for (const auto& w : writes) {
        Product p;
        if (as_product(w, p) && w->claim()) products.push_back(std::move(p));
        else singles.push_back([w](WorkScratch& s) { w->complete(s); });
    }
    std::vector<Batch> batches = make_batches(products);
    // Phase 1: B of every batch widened once, in pieces (runs of whole columns for DN, rows for
    // ND); the other writes run meanwhile.
    std::vector<WorkerPool::TaskFn> tasks = std::move(singles);
    for (Batch& b : batches) {
        // Pins on the destination see its old bytes: it is written below outside the hooks.
        snapshot_pins_over(b.dst.allocation(), GmSpan::of(b.dst));
        b.b_pins.clear();
        for (const auto& block : b.blocks) {  // every block shares the batch's B columns
            auto block_pins = pins_of(block, false);
            b.b_pins.insert(b.b_pins.end(), block_pins.begin(), block_pins.end());
        }
        const bool cm = b.b.layout() == Layout::DN;
        const int runs = cm ? b.b.cols() : b.b.rows();
        const int run_len = cm ? b.b.rows() : b.b.cols();
        b.b_widened_bytes = ZeroedBuffer(static_cast<std::size_t>(runs) * static_cast<std::size_t>(run_len) * sizeof(float));
        b.b_piece_ok.assign(0, 0);
        const int per_piece = static_cast<int>(std::max<std::int64_t>(1, kWidenPieceElements / std::max(1, run_len)));
        for (int first = 0; first < runs; first += per_piece) {
            const int count = std::min(per_piece, runs - first);
            const std::size_t piece = b.b_piece_ok.size();
            b.b_piece_ok.push_back(0);
            tasks.push_back([&b, first, count, cm, run_len, piece](WorkScratch&) {
                const GmTensor part = cm ? b.b.sub(0, first, b.b.rows(), count) : b.b.sub(first, 0, count, b.b.cols());
                const bool ok = widen_gm_if_unchanged(part, b.b_pins, b.b_widened() + static_cast<std::size_t>(first) * run_len,
                                                      run_len);
                b.b_piece_ok[piece] = ok ? 1 : 0;
            });
        }
    }
    pool.run(tasks);
    // Phase 2: bands of whole row blocks, each one sgemm.
    tasks.clear();
    for (Batch& b : batches) {
        b.b_ok = std::all_of(b.b_piece_ok.begin(), b.b_piece_ok.end(), [](char ok) { return ok != 0; });
        int row0 = 0;
        for (std::size_t first = 0; first < b.blocks.size();) {
            std::size_t last = first;
            int rows = 0;
            while (last < b.blocks.size() && (rows == 0 || rows + b.block_rows[last] <= kBandRows)) rows += b.block_rows[last++];
            tasks.push_back([&b, first, last, row0, rows](WorkScratch& s) { compute_band(b, first, last, row0, rows, s); });
            row0 += rows;
            first = last;
        }
    }
    pool.run(tasks);
}

}  // namespace tandem
