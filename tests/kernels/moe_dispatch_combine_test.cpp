// moe_dispatch and moe_combine (moe_ffn's dispatch and combine stages alone), what is their own
// (tests/kernels/op_conformance_test.cpp checks what every op must do, on the round-robin router): both
// verify with the seeded routers, whose ranks receive unequal rows; the received rows are laid
// out as moe_ffn's kernels read them; the payload is what crosses the links; shapes the kernels
// cannot take are refused with the rule.
#include <gtest/gtest.h>

#include <string>

#include "host/run/program.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace moe_dispatch_combine_test {

RunRequest alone(const std::string& op, int ranks, int routing, int k = 256) {
    RunRequest r;
    r.op = op;
    r.ranks = ranks;
    r.m = 16;
    r.k = k;
    r.n = 256;
    r.knobs["routing"] = routing;
    r.knobs["topk"] = 4;
    r.knobs["experts_per_rank"] = 4;
    r.comm_blocks = 6;
    return r;
}

TEST(MoeDispatchCombine, VerifyWithTheSeededRouters) {
    for (const char* op : {"moe_dispatch", "moe_combine"}) {
        for (const auto& [ranks, routing] : {std::pair{2, 1}, std::pair{4, 2}, std::pair{8, 1}}) {
            const ProgramOutput out = test::run_op(alone(op, ranks, routing));
            EXPECT_EQ(out.results.verification, Verification::Passed)
                << op << " ranks " << ranks << " routing " << routing << "\n"
                << out.failure_report;
        }
    }
}

TEST(MoeDispatchCombine, DispatchOutputHasARowPerReceivedRoute) {
    // Zipf routing: ranks receive unequal rows; the output has the most any rank receives, each a
    // packed row (K int8 and the 32-byte scale).
    const RunRequest r = alone("moe_dispatch", 4, 2);
    const ProgramOutput out = test::run_op(r);
    ASSERT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    kernels::OpParams p;
    p.ranks = r.ranks;
    p.m = r.m;
    p.k = r.k;
    p.n = r.n;
    p.knobs = r.knobs;
    const kernels::moe::RouteTables t = kernels::moe::make_route_tables(kernels::moe::moe_shape_of(p));
    ASSERT_EQ(out.bench.out.size(), 4U);
    EXPECT_EQ(out.bench.out[0].floats().size(), static_cast<std::size_t>(t.max_recv) * (r.k + 32));
    EXPECT_NE(t.recv_total[0], t.recv_total[3]);  // the Zipf router's skew is what is checked
}

TEST(MoeDispatchCombine, EveryFaultFailsVerification) {
    RunRequest d = alone("moe_dispatch", 2, 1);
    d.fault = "drop_last_row";
    EXPECT_EQ(test::run_op(d).results.verification, Verification::Failed);
    RunRequest c = alone("moe_combine", 2, 1);
    c.fault = "skip_last_route";
    EXPECT_EQ(test::run_op(c).results.verification, Verification::Failed);
}

TEST(MoeDispatchCombine, RefusesShapesTheKernelsCannotTake) {
    for (const char* op : {"moe_dispatch", "moe_combine"}) {
        EXPECT_NE(test::refusal_of(alone(op, 2, 0, 300)).find("256"), std::string::npos) << op;
        RunRequest wide = alone(op, 2, 0, 256 * 72);  // an 18K row does not fit UB
        EXPECT_NE(test::refusal_of(wide).find("UB"), std::string::npos) << op;
    }
}

}  // namespace moe_dispatch_combine_test
}  // namespace tandem::host
