#pragma once
// Verification of every rank's output against an OpenBLAS golden (fp16/bf16 inputs widened to
// fp32). Two rules:
//  * fp32 output, the seed's: an element fails when |d| > 1e-3 and |d / expected| > 1e-3 (or
//    NaN differs); a rank fails when more than 0.1% of its elements fail or more than 1000
//    outputs are zero where the golden is not. Integer inputs make the expected sums exact.
//  * fp16/bf16 output, Ascend's GEMM+AllReduce example's: an element errs when
//    |d| > 1.0 + rel * |expected|, and at most 1% may err; rel = 0.01 for fp16 (about ten units
//    in the last place of its 11-bit significand) and 0.08 for bf16 (the same ten units of its
//    8-bit one). The output's own rounding, and partial sums stored in the output dtype and
//    added up, are what these margins cover.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/mem/dtype.hpp"

namespace tandem::kernels {
struct OwnMath;
}

namespace tandem::host {

struct Mismatch {
    int rank;
    std::int64_t index;  // row-major element index
    float expected;
    float actual;
};

struct Tolerance {
    enum class Rule { AbsAndRel, AbsPlusRel };  // fail when (|d| > abs and |d/e| > rel) / when |d| > abs + rel |e|
    Rule rule = Rule::AbsAndRel;
    double abs = 1e-3;
    double rel = 1e-3;
    double max_failure_share = 0.001;
    std::int64_t max_zero_outputs = 1000;  // -1: not checked
    std::string describe() const;
};
// The rule for an output of dtype `out` (see above).
Tolerance tolerance_for(DType out);
// An op with its own math (kernels::OwnMath): its rule (|d| > abs + rel |e| fails, at most a share
// of the elements may), as the command line and the API check it.
Tolerance own_math_tolerance(const kernels::OwnMath& own, DType out);

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

// On `host_threads` host threads (0: every core); the result does not depend on their number.
RankVerification verify_rank(int rank, const float* actual, const std::vector<float>& golden,
                             const Tolerance& tol = Tolerance{}, int host_threads = 0);

std::string describe_failures(const std::vector<RankVerification>& results, int n_cols);

}  // namespace tandem::host
