#include "host/run/verify.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "host/run/parallel_bands.hpp"
#include "kernels/op_desc.hpp"
#include "sim/mem/fp16_widen.hpp"

namespace tandem::host {

namespace {
constexpr std::size_t kWorstKept = 5;

// Largest absolute error first; equal errors by element index, so that the kept mismatches do
// not depend on how the check was split over threads.
bool worse(const Mismatch& x, const Mismatch& y) {
    const float dx = std::fabs(x.actual - x.expected);
    const float dy = std::fabs(y.actual - y.expected);
    if (dx != dy) return dx > dy;
    return x.index < y.index;
}

void keep_worst(std::vector<Mismatch>& worst) {
    std::sort(worst.begin(), worst.end(), worse);
    if (worst.size() > kWorstKept) worst.resize(kWorstKept);
}

// Elements [begin, end) of one rank's C.
RankVerification verify_band(int rank, const float* actual, const float* golden, std::int64_t begin, std::int64_t end,
                             const Tolerance& tol) {
    RankVerification v;
    v.rank = rank;
    for (std::int64_t i = begin; i < end; ++i) {
        const float e = golden[i];
        const float a = actual[i];
        if (a == e) continue;  // the common case (exact results): passes, and is no zero-where-nonzero
        const double d = std::fabs(static_cast<double>(a) - e);
        const bool nan_differs = std::isnan(a) != std::isnan(e);
        const double ae = std::fabs(static_cast<double>(e));
        const bool off = tol.rule == Tolerance::Rule::AbsAndRel ? (d > tol.abs && d / std::max(ae, 1e-30) > tol.rel)
                                                               : d > tol.abs + tol.rel * ae;
        const bool fails = nan_differs || off;
        if (a == 0.0f && e != 0.0f) ++v.zero_where_nonzero;
        if (!fails) continue;
        ++v.failures;
        v.worst.push_back(Mismatch{rank, i, e, a});
        if (v.worst.size() > kWorstKept * 4) keep_worst(v.worst);
    }
    keep_worst(v.worst);
    return v;
}
}  // namespace

std::vector<float> golden_gemm(const std::vector<std::vector<std::uint16_t>>& a_slices,
                               const std::vector<std::uint16_t>& b_transposed, int m, int k, int n) {
    std::int64_t a_rows = 0;
    for (const auto& slice : a_slices) {
        if (k <= 0 || static_cast<std::int64_t>(slice.size()) % k != 0)
            throw std::invalid_argument("golden_gemm: an A slice is not a whole number of K-long rows");
        a_rows += static_cast<std::int64_t>(slice.size()) / k;
    }
    if (a_rows != m) throw std::invalid_argument("golden_gemm: the A slices do not make M x K");
    std::vector<float> bt(b_transposed.size());
    for_each_band(static_cast<std::int64_t>(bt.size()), kMinBandElements, 0, [&](std::int64_t b, std::int64_t e) {
        widen_halves(b_transposed.data() + b, bt.data() + b, static_cast<std::size_t>(e - b));
    });
    // Row i of A, wherever its slice keeps it.
    std::vector<const std::uint16_t*> a_row(static_cast<std::size_t>(m));
    std::size_t row = 0;
    for (const auto& slice : a_slices)
        for (std::size_t r = 0; r < slice.size() / static_cast<std::size_t>(k); ++r) a_row[row++] = slice.data() + r * k;
    std::vector<float> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    // Row bands on every host core (the program runs BLAS single-threaded: its simulated streams
    // are the threads). Each band widens its rows of A a block at a time into its own buffer
    // and multiplies them; every element of C comes from one call over the whole K, whatever
    // the banding, so the golden does not depend on the core count.
    constexpr std::int64_t kRowsPerCall = 256;
    const std::int64_t min_rows = std::max<std::int64_t>(1, kMinBandElements / std::max(1, n));
    for_each_band(m, min_rows, 0, [&](std::int64_t row0, std::int64_t row_end) {
        std::vector<float> a(static_cast<std::size_t>(std::min(kRowsPerCall, row_end - row0)) * static_cast<std::size_t>(k));
        for (std::int64_t r0 = row0; r0 < row_end; r0 += kRowsPerCall) {
            const std::int64_t rows = std::min(kRowsPerCall, row_end - r0);
            for (std::int64_t r = 0; r < rows; ++r)
                widen_halves(a_row[static_cast<std::size_t>(r0 + r)], a.data() + r * k, static_cast<std::size_t>(k));
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), n, k, 1.0f, a.data(), k, bt.data(), k,
                        0.0f, c.data() + std::size_t(r0) * n, n);
        }
    });
    return c;
}

Tolerance tolerance_for(DType out) {
    if (out == DType::F32) return Tolerance{};
    Tolerance t;
    t.rule = Tolerance::Rule::AbsPlusRel;
    t.abs = 1.0;
    t.rel = out == DType::F16 ? 0.01 : 0.08;
    t.max_failure_share = 0.01;
    t.max_zero_outputs = -1;  // -1, 0, 1 inputs make zero a common right answer
    return t;
}

Tolerance own_math_tolerance(const kernels::OwnMath& own, DType out) {
    Tolerance tol = tolerance_for(out);
    tol.rule = Tolerance::Rule::AbsPlusRel;
    tol.abs = own.abs;
    tol.rel = own.rel;
    tol.max_failure_share = own.max_failure_share;
    tol.max_zero_outputs = -1;
    return tol;
}

std::string Tolerance::describe() const {
    if (rule == Rule::AbsAndRel)
        return fmt::format("|d| > {:g} and |d/expected| > {:g}, at most {:g}% may fail", abs, rel, max_failure_share * 100);
    return fmt::format("|d| > {:g} + {:g} |expected|, at most {:g}% may fail", abs, rel, max_failure_share * 100);
}

RankVerification verify_rank(int rank, const float* actual, const std::vector<float>& golden, const Tolerance& tol,
                             int host_threads) {
    const std::int64_t count = static_cast<std::int64_t>(golden.size());
    std::vector<std::pair<std::int64_t, RankVerification>> bands;
    std::mutex mu;
    for_each_band(count, kMinBandElements, host_threads, [&](std::int64_t b, std::int64_t e) {
        RankVerification part = verify_band(rank, actual, golden.data(), b, e, tol);
        std::lock_guard lock(mu);
        bands.emplace_back(b, std::move(part));
    });
    RankVerification v;
    v.rank = rank;
    for (auto& [begin, part] : bands) {
        v.failures += part.failures;
        v.zero_where_nonzero += part.zero_where_nonzero;
        v.worst.insert(v.worst.end(), part.worst.begin(), part.worst.end());
    }
    keep_worst(v.worst);
    v.passed = static_cast<double>(v.failures) <= tol.max_failure_share * static_cast<double>(golden.size()) &&
               (tol.max_zero_outputs < 0 || v.zero_where_nonzero <= tol.max_zero_outputs);
    return v;
}

std::string describe_failures(const std::vector<RankVerification>& results, int n_cols) {
    std::string out;
    for (const RankVerification& v : results) {
        if (v.passed) continue;
        out += fmt::format("  rank {}: {} elements differ, {} zero where the golden is not\n", v.rank, v.failures,
                           v.zero_where_nonzero);
        for (const Mismatch& mm : v.worst) {
            out += fmt::format("    C[{}][{}]: expected {} got {}\n", mm.index / n_cols, mm.index % n_cols, mm.expected,
                               mm.actual);
        }
    }
    return out;
}

}  // namespace tandem::host
