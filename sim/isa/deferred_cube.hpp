#pragma once
// The cube's data path, deferred (functional mode).
//
// Inside the lockstep windows the cube only records what it computes:
//   * TLOAD into L1 pins the GM region (sim/mem/gm_deferred.hpp) instead of copying it;
//   * TEXTRACT into L0A/L0B refers to a sub-region of what the L1 tile refers to;
//   * TMATMUL / TMATMUL_ACC append a term (a, b) to the accumulator's chain;
//   * TSTORE of the accumulator registers a pending write of the chain's value.
// The chains are evaluated when their value is observed (a read of the stored GM region, a
// store across the interconnect) or, for the most part, when the kernel ends: then the logical
// process evaluates them on every host core, outside the windows, and each as a few large
// sgemm calls, since consecutive terms whose operands are adjacent in GM (the K steps of one
// output tile) merge into one product.
//
// Each chain is evaluated by one thread in term order, so results never depend on the thread
// count or timing. The sum is the same as the step-by-step one up to fp32 rounding association
// (sgemm sums a merged K run in its own blocking order; the cube's own order inside one MMAD is
// not modelled either way).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/tile.hpp"
#include "sim/mem/gm_deferred.hpp"

namespace tandem {

// One matmul operand: a pinned GM region (at pin_row/pin_col, rows x cols of it), or a copy of
// a tile's raw fp16, bf16 or fp32 bytes in the tile's storage order when the tile was not a view.
struct MatmulOperand {
    std::shared_ptr<GmPin> pin;
    int pin_row = 0;
    int pin_col = 0;
    std::shared_ptr<const std::vector<std::byte>> owned;
    int rows = 0;
    int cols = 0;
    bool column_major = false;
    DType dtype = DType::F16;
};

struct MatmulTerm {
    MatmulOperand a;
    MatmulOperand b;
};

// What `base` holds: the whole rows x cols start value (row-major), or a bias broadcast over the
// accumulator: one value per column (1 x cols, Ascend's bias table) or per row (rows x 1).
enum class ChainBase : std::uint8_t { Full, PerColumn, PerRow };

// acc = base (or zero) + sum over terms of a * b, in term order; rows x cols fp32, row-major.
struct MatmulChain {
    int rows = 0;
    int cols = 0;
    std::shared_ptr<const std::vector<float>> base;
    std::vector<MatmulTerm> terms;
    ChainBase base_shape = ChainBase::Full;
};

// The value of `chain` into `out` (rows x cols, row-major).
void evaluate_chain(const MatmulChain& chain, float* out, WorkScratch& scratch);

// The first run of terms from `begin` that are adjacent along K in GM on both sides (so one
// product of the merged regions computes them): its end and its K extent.
struct TermRun {
    std::size_t end = 0;
    int k = 0;
};
TermRun term_run(const std::vector<MatmulTerm>& terms, std::size_t begin);
// The GM region a run of operands covers: rows x cols from the first operand's origin.
GmTensor run_region(const MatmulOperand& first, int rows, int cols);

// The operand a tile holds (a view of its pin, or a copy of its raw bytes).
MatmulOperand operand_of(const Tile& t);

// The values of a (small) fp32, fp16 or bf16 tile as floats, row-major, read through its pin when
// it is a deferred view (a bias tile in L1).
std::vector<float> tile_values(const Tile& t);

// Give a tile with deferred content its actual bytes (a pinned view copied in, or an
// accumulator's chain evaluated into it). No-op for a tile without deferred content.
void materialize(const Tile& t);

// TSTORE of an accumulator with a chain into local GM, deferred until observed or the kernel ends.
// Into an fp16 or bf16 destination the value is rounded to it (the FIX pipe's cast).
class DeferredMatmulStore final : public PendingGmWrite {
public:
    DeferredMatmulStore(const GmTensor& dst, std::shared_ptr<const MatmulChain> chain);
    const MatmulChain& chain() const { return *chain_; }

private:
    void run(WorkScratch& scratch) override;
    std::shared_ptr<const MatmulChain> chain_;
};

}  // namespace tandem
