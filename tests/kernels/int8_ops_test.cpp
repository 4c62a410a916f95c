// int8 inputs through the Iris-family ops (docs/IRIS.md "int8"): every variant that declares int8
// verifies on 2 and 4 ranks at its small test shape (int8 A and B, int32 sums, fp32 output), and
// under every schedule it offers; its timing-only run gives the functional times; a fault is
// still caught; the cube's busy time is half the fp16 run's (K steps twice as deep at half the
// cycles per fractal: the same time per step, half as many steps); a bias or a non-fp32 output
// with int8 is refused naming the flag; the C++ API takes int8 tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "tandem/tandem.hpp"
#include "tests/support/op_conformance.hpp"
#include "tests/support/registered_variants.hpp"

namespace tandem::test {
namespace int8_ops_test {

bool takes_int8(const kernels::VariantDesc& v) { return takes_dtype(v, DType::I8); }

host::RunRequest int8_request(const VariantCase& c, int ranks) { return dtype_request(c, ranks, DType::I8); }

class Int8Ops : public ::testing::TestWithParam<VariantCase> {
protected:
    const Profile profile_ = b1_profile();
};

TEST_P(Int8Ops, VerifiesOnTwoAndFourRanks) {
    const VariantCase& c = GetParam();
    const std::vector<int> ranks = c.op->communicates() ? std::vector<int>{2, 4} : std::vector<int>{1, 2};
    for (int w : ranks) {
        const host::RunRequest r = int8_request(c, w);
        SCOPED_TRACE(describe(r));
        const host::ProgramOutput out = run_validated(r, profile_);
        EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
        expect_view_invariants(*c.op, out);
        if (w == ranks.front()) {  // timing-only: the same simulated times without data
            host::RunRequest t = r;
            t.timing_only = true;
            EXPECT_EQ(run_validated(t, profile_).results.times.pipelined_us, out.results.times.pipelined_us);
        }
    }
}

// The stream-K schedules store fp32 partials out of the int32 L0C and fix them up on the AIVs.
TEST_P(Int8Ops, EveryScheduleVerifies) {
    const VariantCase& c = GetParam();
    for (std::size_t i = 1; i < c.variant->schedules.size(); ++i) {
        host::RunRequest r = int8_request(c, 2);
        r.schedule = c.variant->schedules[i];
        SCOPED_TRACE(describe(r));
        const host::ProgramOutput out = run_validated(r, profile_);
        EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
    }
}

TEST_P(Int8Ops, AFaultIsCaught) { expect_first_fault_caught(GetParam(), DType::I8, profile_); }

INSTANTIATE_TEST_SUITE_P(Registry, Int8Ops, ::testing::ValuesIn(registered_variants(takes_int8)), variant_case_name);

TEST(Int8OpsCoverage, TheIrisFamilyTakesInt8AndTheReplicasDoNot) {
    for (const char* op : {"matmul_all_reduce", "matmul_all_gather", "matmul_reduce_scatter", "all_gather_matmul",
                           "matmul_all_scatter"}) {
        const kernels::OpDesc& d = kernels::find_op(op);
        for (const kernels::VariantDesc& v : d.variants) {
            const bool replica = v.name == "ascend" || v.name == "ascend_subtile";
            EXPECT_EQ(takes_int8(v), !replica) << op << " / " << v.name;
        }
    }
    EXPECT_TRUE(takes_int8(*kernels::find_op("gemm").find_variant("tiled")));
    EXPECT_FALSE(takes_int8(*kernels::find_op("gemm").find_variant("pto_performance")));
    for (const kernels::VariantDesc& v : kernels::find_op("moe_ffn").variants) EXPECT_FALSE(takes_int8(v)) << v.name;
}

// int8's K steps are twice as deep (base-n/2) at half the cycles per fractal
// (pipes.cube_int8_cost_factor = 0.5): each costs what an fp16 step costs, fixed cycles included,
// and there are half as many of them.
TEST(Int8OpsCost, CubeBusyIsHalfTheFp16Runs) {
    const Profile p = b1_profile();
    ASSERT_EQ(p.pipes.cube_int8_cost_factor, 0.5);
    const std::vector<SimTime> f16 = cube_busy_ps_per_rank(DType::F16, p);
    const std::vector<SimTime> i8 = cube_busy_ps_per_rank(DType::I8, p);
    for (int rank = 0; rank < 2; ++rank) {
        const SimTime busy16 = f16.at(static_cast<std::size_t>(rank));
        const SimTime busy8 = i8.at(static_cast<std::size_t>(rank));
        EXPECT_GT(busy16, 0);
        // Each duration is rounded to a whole picosecond: a picosecond per instruction at most.
        EXPECT_NEAR(static_cast<double>(2 * busy8), static_cast<double>(busy16), 1e-5 * static_cast<double>(busy16))
            << "rank " << rank;
    }
}

TEST(Int8OpsChecks, ABiasOrANonFp32OutputIsRefusedNamingTheFlag) {
    host::RunRequest r;
    r.op = "matmul_all_reduce";
    r.ranks = 2;
    r.m = r.k = r.n = 512;
    r.dtype = DType::I8;
    EXPECT_EQ(refusal_of(r), "");
    r.bias = kernels::BiasKind::N;
    std::string why = refusal_of(r);
    EXPECT_NE(why.find("--bias n"), std::string::npos) << why;
    EXPECT_NE(why.find("int8"), std::string::npos) << why;
    r.bias = kernels::BiasKind::None;
    r.out_dtype = DType::F16;
    why = refusal_of(r);
    EXPECT_NE(why.find("--out-dtype fp16"), std::string::npos) << why;
    EXPECT_NE(why.find("fp32"), std::string::npos) << why;
    // all_gather_matmul's shards are whole int8 K tiles, 2 x base-n deep.
    host::RunRequest g;
    g.op = "all_gather_matmul";
    g.ranks = 2;
    g.m = g.n = 256;
    g.k = 512;  // shards of 256: one fp16 K tile, half an int8 one
    g.dtype = DType::I8;
    why = refusal_of(g);
    EXPECT_NE(why.find("--gk 512"), std::string::npos) << why;
    EXPECT_NE(why.find("n*2*base-n"), std::string::npos) << why;
    g.dtype = DType::F16;
    EXPECT_EQ(refusal_of(g), "");
}

// The C++ API: int8 tensors (DataType::I8) in, an fp32 tensor out, the int32 sums exact.
TEST(Int8OpsApi, MatmulAllReduceOfInt8TensorsGivesTheExactSums) {
    api::ContextOptions o;
    o.ranks = 2;
    api::Context ctx(o);
    const int m = 64, k = 96, n = 64;
    std::vector<std::vector<float>> a(2), b(2);
    for (int r = 0; r < 2; ++r) {
        for (int i = 0; i < m * k; ++i) a[r].push_back(float((i * 37 + 11 * r) % 256 - 128));
        for (int i = 0; i < k * n; ++i) b[r].push_back(float((i * 53 + 7 * r) % 255 - 127));
    }
    api::Tensor ta = ctx.from_host(m, k, api::DataType::I8, a);
    api::Tensor tb = ctx.from_host(k, n, api::DataType::I8, b);
    EXPECT_EQ(ta.to_host(1), a[1]);  // int8 holds these values exactly
    api::Tensor c = ctx.zeros(m, n, api::DataType::F32);
    api::OpConfig cfg;
    cfg.base_m = 32;
    cfg.base_n = 64;
    ctx.ops().run("matmul_all_reduce", c, ta, tb, nullptr, false, cfg);
    for (int r = 0; r < 2; ++r) {
        const std::vector<float> got = c.to_host(r);
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                std::int64_t sum = 0;
                for (int q = 0; q < 2; ++q)
                    for (int p = 0; p < k; ++p)
                        sum += std::int64_t(a[q][std::size_t(i * k + p)]) * std::int64_t(b[q][std::size_t(p * n + j)]);
                ASSERT_EQ(got[std::size_t(i * n + j)], float(sum)) << r << ": " << i << "," << j;
            }
    }
    // A value int8 does not hold is refused, not wrapped.
    std::vector<std::vector<float>> big(2, std::vector<float>(std::size_t(m * k), 200.0f));
    EXPECT_THROW(ctx.from_host(m, k, api::DataType::I8, big), api::Error);
}

}  // namespace int8_ops_test
}  // namespace tandem::test
