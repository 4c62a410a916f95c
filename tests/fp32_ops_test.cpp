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
#include "tests/op_conformance.hpp"

namespace tandem::test {
namespace {

struct Fp32Case {
    const kernels::OpDesc* op;
    const kernels::VariantDesc* variant;
};

void PrintTo(const Fp32Case& c, std::ostream* os) { *os << c.op->name << " / " << c.variant->name; }

std::vector<Fp32Case> fp32_variants() {
    std::vector<Fp32Case> cases;
    for (const kernels::OpDesc* op : kernels::registered_ops())
        for (const kernels::VariantDesc& v : op->variants)
            if (std::find(v.dtypes.begin(), v.dtypes.end(), DType::F32) != v.dtypes.end()) cases.push_back({op, &v});
    return cases;
}

host::RunRequest fp32_request(const Fp32Case& c, int ranks) {
    host::RunRequest r = conformance_config(*c.op, *c.variant, c.op->test_shape_of(*c.variant)(ranks));
    r.dtype = DType::F32;
    r.out_dtype = DType::F32;
    return r;
}

class Fp32Ops : public ::testing::TestWithParam<Fp32Case> {
protected:
    const Profile profile_ = b1_profile();
};

TEST_P(Fp32Ops, VerifiesOnTwoFourAndEightRanks) {
    const Fp32Case& c = GetParam();
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

TEST_P(Fp32Ops, AFaultIsCaught) {
    const Fp32Case& c = GetParam();
    ASSERT_FALSE(c.variant->faults.empty());
    host::RunRequest r = fp32_request(c, 2);
    r.fault = c.variant->faults.front();
    if (!c.variant->schedules.empty() && r.fault.find("fixup") != std::string::npos) r.schedule = c.variant->schedules.back();
    SCOPED_TRACE(describe(r));
    EXPECT_TRUE(fault_caught(r, profile_));
}

std::string fp32_case_name(const ::testing::TestParamInfo<Fp32Case>& info) {
    return info.param.op->name + "__" + info.param.variant->name;
}

INSTANTIATE_TEST_SUITE_P(Registry, Fp32Ops, ::testing::ValuesIn(fp32_variants()), fp32_case_name);

TEST(Fp32OpsCoverage, TheIrisFamilyTakesFp32) {
    for (const char* op : {"matmul_all_reduce", "matmul_all_gather", "matmul_reduce_scatter", "all_gather_matmul",
                           "matmul_all_scatter"}) {
        const kernels::OpDesc& d = kernels::find_op(op);
        int with_fp32 = 0;
        for (const kernels::VariantDesc& v : d.variants)
            with_fp32 += std::find(v.dtypes.begin(), v.dtypes.end(), DType::F32) != v.dtypes.end() ? 1 : 0;
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
    host::RunRequest r;
    r.op = "matmul_all_reduce";
    r.variant = "atomic";
    r.ranks = 2;
    r.m = 512;
    r.k = 1024;
    r.n = 512;
    r.timing_only = true;
    r.dtype = DType::F16;
    const host::ProgramOutput f16 = run_validated(r, p);
    r.dtype = DType::F32;
    const host::ProgramOutput f32 = run_validated(r, p);
    const auto cube = static_cast<std::size_t>(Pipe::M);
    for (int rank = 0; rank < 2; ++rank) {
        const SimTime busy16 = f16.bench.pipelined_busy_ps.at(rank)[cube];
        const SimTime busy32 = f32.bench.pipelined_busy_ps.at(rank)[cube];
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

}  // namespace
}  // namespace tandem::test
