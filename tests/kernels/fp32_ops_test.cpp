// fp32 inputs through the Iris-family ops (docs/IRIS.md "Datatypes"): every variant that declares
// fp32 verifies on 2, 4 and 8 ranks at its small test shape (fp32 A, B and bias; fp32 output), its
// timing-only run gives the functional times, a fault is still caught; the cube's busy time of
// an fp32 run is four times the fp16 run's less the fixed cycles (twice the K steps at twice the cycles each:
// pipes.cube_fp32_cost_factor = 4 over half-deep K steps); a tile that does not fit is refused
// naming the flags.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "tests/support/op_conformance.hpp"
#include "tests/support/registered_variants.hpp"

namespace tandem::test {
namespace fp32_ops_test {

bool takes_fp32(const kernels::VariantDesc& v) { return takes_dtype(v, DType::F32); }

host::RunRequest fp32_request(const VariantCase& c, int ranks) { return dtype_request(c, ranks, DType::F32); }

class Fp32Ops : public ::testing::TestWithParam<VariantCase> {
protected:
    const Profile profile_ = b1_profile();
};

TEST_P(Fp32Ops, VerifiesOnTwoFourAndEightRanks) {
    const VariantCase& c = GetParam();
    const std::vector<int> ranks = c.op->communicates() ? std::vector<int>{2, 4, 8} : std::vector<int>{1, 2};
    for (int w : ranks) {
        host::RunRequest r = fp32_request(c, w);
        r.bias = c.variant->takes_bias ? (w == 4 ? kernels::BiasKind::M : kernels::BiasKind::N) : kernels::BiasKind::None;
        SCOPED_TRACE(describe(r));
        const host::ProgramOutput out = run_validated(r, profile_);
        EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
        expect_view_invariants(*c.op, out);
        if (w == 2) {  // timing-only: the same simulated times without data
            host::RunRequest t = r;
            t.timing_only = true;
            EXPECT_EQ(run_validated(t, profile_).results.times.pipelined_us, out.results.times.pipelined_us);
        }
    }
}

TEST_P(Fp32Ops, AFaultIsCaught) { expect_first_fault_caught(GetParam(), DType::F32, profile_); }

INSTANTIATE_TEST_SUITE_P(Registry, Fp32Ops, ::testing::ValuesIn(registered_variants(takes_fp32)), variant_case_name);

TEST(Fp32OpsCoverage, TheIrisFamilyTakesFp32) {
    for (const char* op : {"matmul_all_reduce", "matmul_all_gather", "matmul_reduce_scatter", "all_gather_matmul",
                           "matmul_all_scatter"}) {
        const kernels::OpDesc& d = kernels::find_op(op);
        int with_fp32 = 0;
        for (const kernels::VariantDesc& v : d.variants)
            with_fp32 += takes_fp32(v) ? 1 : 0;
        EXPECT_GT(with_fp32, 0) << op;
    }
    // The published Ascend replicas keep their published fp16.
    for (const char* v : {"ascend", "ascend_subtile"}) {
        const kernels::VariantDesc* d = kernels::find_op("matmul_all_reduce").find_variant(v);
        ASSERT_NE(d, nullptr);
        EXPECT_EQ(d->dtypes, std::vector<DType>{DType::F16}) << v;
    }
}

// The cube's busy time over the pipelined view: fp32 K steps are half as deep (base-n/8) and cost
// twice an fp16 K step (factor 4 on half the fractals), and there are twice as many of them.
TEST(Fp32OpsCost, CubeBusyIsFourTimesTheFp16Runs) {
    const Profile p = b1_profile();
    ASSERT_EQ(p.pipes.cube_fp32_cost_factor, 4.0);
    const std::vector<SimTime> f16 = cube_busy_ps_per_rank(DType::F16, p);
    const std::vector<SimTime> f32 = cube_busy_ps_per_rank(DType::F32, p);
    for (int rank = 0; rank < 2; ++rank) {
        const SimTime busy16 = f16.at(static_cast<std::size_t>(rank));
        const SimTime busy32 = f32.at(static_cast<std::size_t>(rank));
        EXPECT_GT(busy16, 0);
        // Each of the 2n fp32 instructions costs the fixed cycles once where the n fp16 ones cost
        // them once each: 4 x busy16 less 2n x fixed, a few percent at these 64-deep steps.
        EXPECT_LE(busy32, 4 * busy16) << "rank " << rank;
        EXPECT_GT(static_cast<double>(busy32), 3.8 * static_cast<double>(busy16)) << "rank " << rank;
    }
}

// A GEMM large enough to be bound by its K loop (gemm tiled, one chip, 2048^3): fp32 takes
// several times the fp16 time (four times the cube cycles, twice the bytes per element; the
// launch and synchronize do not grow).
TEST(Fp32OpsCost, AGemmTakesSeveralTimesTheFp16Time) {
    const Profile p = b1_profile();
    host::RunRequest r;
    r.op = "gemm";
    r.variant = "tiled";
    r.ranks = 1;
    r.m = r.k = r.n = 2048;
    r.timing_only = true;
    const double f16 = run_validated(r, p).results.times.pipelined_us;
    r.dtype = DType::F32;
    const double f32 = run_validated(r, p).results.times.pipelined_us;
    EXPECT_GT(f32 / f16, 2.5) << f16 << " us fp16, " << f32 << " us fp32";
    EXPECT_LT(f32 / f16, 4.05) << f16 << " us fp16, " << f32 << " us fp32";
}

TEST(Fp32OpsChecks, ATileThatDoesNotFitNamesTheFlags) {
    host::RunRequest r;
    r.op = "matmul_all_reduce";
    r.ranks = 2;
    r.m = r.k = r.n = 512;
    r.dtype = DType::F32;
    r.base_m = 256;
    r.base_n = 256;  // the fp32 accumulator alone, 256 x 256 x 4 bytes, is twice L0C
    const std::string why = refusal_of(r);
    EXPECT_NE(why.find("--base-m 256"), std::string::npos) << why;
    EXPECT_NE(why.find("L0C"), std::string::npos) << why;
    // The default tile fits with fp32: the K panel is half as deep instead.
    r.base_m = 128;
    EXPECT_EQ(refusal_of(r), "");
}

}  // namespace fp32_ops_test
}  // namespace tandem::test
