#include "host/verify.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "sim/mem/fp16_widen.hpp"

namespace tandem::host {

namespace {
constexpr double kAbsTolerance = 1e-3;
constexpr double kRelTolerance = 1e-3;
constexpr double kMaxFailureShare = 0.001;      // 0.1% of elements
constexpr std::int64_t kMaxZeroOutputs = 1000;  // the seed's guard against untouched outputs
constexpr std::size_t kWorstKept = 5;

std::vector<float> widen(const std::vector<std::uint16_t>& h) {
    std::vector<float> f(h.size());
    widen_halves(h.data(), f.data(), h.size());
    return f;
}
}  // namespace

std::vector<float> golden_gemm(const std::vector<std::uint16_t>& a_full, const std::vector<std::uint16_t>& b_transposed,
                               int m, int k, int n) {
    const std::vector<float> a = widen(a_full);
    const std::vector<float> bt = widen(b_transposed);
    std::vector<float> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    // Row bands on every host core: the program runs BLAS single-threaded (its simulated streams
    // are the threads), so the golden spreads its own work.
    const int workers = std::max(1, std::min<int>(static_cast<int>(std::thread::hardware_concurrency()), m));
    const int band = (m + workers - 1) / workers;
    std::vector<std::thread> threads;
    for (int row0 = 0; row0 < m; row0 += band) {
        const int rows = std::min(band, m - row0);
        threads.emplace_back([&, row0, rows] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, k, 1.0f, a.data() + std::size_t(row0) * k, k,
                        bt.data(), k, 0.0f, c.data() + std::size_t(row0) * n, n);
        });
    }
    for (auto& t : threads) t.join();
    return c;
}

RankVerification verify_rank(int rank, const float* actual, const std::vector<float>& golden) {
    RankVerification v;
    v.rank = rank;
    for (std::size_t i = 0; i < golden.size(); ++i) {
        const float e = golden[i];
        const float a = actual[i];
        const double d = std::fabs(static_cast<double>(a) - e);
        const bool nan_differs = std::isnan(a) != std::isnan(e);
        const bool fails = nan_differs || (d > kAbsTolerance && d / std::max(std::fabs(static_cast<double>(e)), 1e-30) > kRelTolerance);
        if (a == 0.0f && e != 0.0f) ++v.zero_where_nonzero;
        if (!fails) continue;
        ++v.failures;
        v.worst.push_back(Mismatch{rank, static_cast<std::int64_t>(i), e, a});
        if (v.worst.size() > kWorstKept * 4) {
            std::partial_sort(v.worst.begin(), v.worst.begin() + kWorstKept, v.worst.end(), [](const Mismatch& x, const Mismatch& y) {
                return std::fabs(x.actual - x.expected) > std::fabs(y.actual - y.expected);
            });
            v.worst.resize(kWorstKept);
        }
    }
    std::sort(v.worst.begin(), v.worst.end(), [](const Mismatch& x, const Mismatch& y) {
        return std::fabs(x.actual - x.expected) > std::fabs(y.actual - y.expected);
    });
    if (v.worst.size() > kWorstKept) v.worst.resize(kWorstKept);
    v.passed = static_cast<double>(v.failures) <= kMaxFailureShare * static_cast<double>(golden.size()) &&
               v.zero_where_nonzero <= kMaxZeroOutputs;
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
