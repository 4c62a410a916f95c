// Every registered op and variant, whatever the registry holds when the suite is built, passes
// the conformance checks of tests/support/op_conformance.hpp (its description complete; verification
// with --sanitize clean on every rank count, declared dtype and bias; timing-only == functional
// times; every offered schedule and comm mode; every fault caught), on the small test shape its
// OpDesc gives. A new op needs nothing here: registering it adds its cases.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "tests/support/op_conformance.hpp"
#include "tests/support/registered_variants.hpp"

namespace tandem::test {
namespace op_conformance_test {

class OpConformance : public ::testing::TestWithParam<VariantCase> {
protected:
    const kernels::OpDesc& op() const { return *GetParam().op; }
    const kernels::VariantDesc& variant() const { return *GetParam().variant; }
    const Profile profile_ = b1_profile();
};

TEST_P(OpConformance, DescriptionHasWhatTheHostAndTheTestsNeed) { check_description(op(), variant()); }

TEST_P(OpConformance, VerifiesCleanOnEveryRankCountDeclaredDtypeAndBias) { check_declared_runs(op(), variant(), profile_); }

TEST_P(OpConformance, TimingOnlyGivesTheFunctionalTimes) { check_timing_only(op(), variant(), profile_); }

TEST_P(OpConformance, EveryOfferedScheduleAndCommModeVerifiesClean) {
    check_offered_schedules_and_modes(op(), variant(), profile_);
}

TEST_P(OpConformance, EveryFaultIsCaught) { check_faults(op(), variant(), profile_); }

INSTANTIATE_TEST_SUITE_P(Registry, OpConformance, ::testing::ValuesIn(registered_variants()), variant_case_name);

// The shapes the benches take from the descriptions (bench/op_functional_bench.cpp,
// bench/scale_bench.cpp --ops) are accepted by every variant.
TEST(OpConformanceShapes, EveryVariantAcceptsItsOpsBenchShapes) {
    const Profile p = b1_profile();
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        for (const kernels::VariantDesc& v : op->variants) {
            for (const kernels::RunShape& shape : {op->bench_shape, op->scale_shape}) {
                host::RunRequest c = conformance_config(*op, v, shape);
                c.timing_only = true;
                EXPECT_EQ(refusal_of(c, p), "") << describe(c);
            }
        }
    }
}

}  // namespace op_conformance_test
}  // namespace tandem::test
