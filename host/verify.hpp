#pragma once
// Verification of every rank's C against an OpenBLAS golden (fp16 inputs widened to fp32), with
// the seed's rule: an element fails when |d| > 1e-3 and |d / expected| > 1e-3 (or NaN differs);
// a rank fails when more than 0.1% of its elements fail or more than 1000 outputs are zero where
// the golden is not.
#include <cstdint>
#include <string>
#include <vector>

namespace tandem::host {

struct Mismatch {
    int rank;
    std::int64_t index;  // row-major element index
    float expected;
    float actual;
};

struct RankVerification {
    int rank = 0;
    std::int64_t failures = 0;
    std::int64_t zero_where_nonzero = 0;
    bool passed = true;
    std::vector<Mismatch> worst;  // largest absolute errors, at most 5
};

// golden = A (M x K) * B (K x N), from fp16 A given as row slices in order (each rank's, or one
// slice holding all of A) and fp16 B stored transposed (N x K). Uses every host core.
std::vector<float> golden_gemm(const std::vector<std::vector<std::uint16_t>>& a_slices,
                               const std::vector<std::uint16_t>& b_transposed, int m, int k, int n);

// Uses every host core; the result does not depend on their number.
RankVerification verify_rank(int rank, const float* actual, const std::vector<float>& golden);

std::string describe_failures(const std::vector<RankVerification>& results, int n_cols);

}  // namespace tandem::host
