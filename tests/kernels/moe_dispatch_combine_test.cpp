// moe_dispatch and moe_combine (moe_ffn's dispatch and combine stages alone), what is their own
// (tests/kernels/op_conformance_test.cpp checks what every op must do, on the round-robin router): both
// verify with the seeded routers, whose ranks receive unequal rows; the received rows are laid
// out as moe_ffn's kernels read them; the payload is what crosses the links; shapes the kernels
// cannot take are refused with the rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "host/run/program.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "sim/profile.hpp"
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
    for (const auto& [op, variant] : {std::pair{"moe_dispatch", "pull"}, std::pair{"moe_dispatch", "push"},
                                      std::pair{"moe_combine", "push"}}) {
        for (const auto& [ranks, routing] : {std::pair{2, 1}, std::pair{4, 2}, std::pair{8, 1}}) {
            RunRequest r = alone(op, ranks, routing);
            r.variant = variant;
            const ProgramOutput out = test::run_op(r);
            EXPECT_EQ(out.results.verification, Verification::Passed)
                << op << " " << variant << " ranks " << ranks << " routing " << routing << "\n"
                << out.failure_report;
        }
    }
}

TEST(MoeDispatchCombine, PushAndPullReceiveTheSameRows) {
    // The two ways move the same rows to the same places: the sources' stores into the inboxes,
    // copied out, leave every rank's received buffer as the destinations' pulls do.
    RunRequest r = alone("moe_dispatch", 4, 2);
    r.variant = "pull";
    const ProgramOutput pull = test::run_op(r);
    r.variant = "push";
    const ProgramOutput push = test::run_op(r);
    ASSERT_EQ(push.results.verification, Verification::Passed) << push.failure_report;
    ASSERT_EQ(pull.bench.out.size(), push.bench.out.size());
    for (std::size_t i = 0; i < pull.bench.out.size(); ++i) {
        const std::span<const float> a = pull.bench.out[i].floats(), b = push.bench.out[i].floats();
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "rank " << i;
    }
}

TEST(MoeDispatchCombine, PushCarriesTheRowsAsWritesAndPullAsReads) {
    // On the A3 die the ports carry less of a write's payload than of a read's (CM384 Table 1:
    // 137 and 167 of 196 GB/s): 48 blocks fill the ports either way, so the same rows take longer
    // pushed than pulled, by about the ratio of the two shares.
    RunRequest r = alone("moe_dispatch", 8, 0, 7168);
    r.m = 128;
    r.knobs.erase("topk");
    r.knobs.erase("experts_per_rank");
    r.comm_blocks = 48;
    r.soc = "Ascend910_9392";
    r.timing_only = true;
    const Profile a3 = load_profile_by_soc(r.soc, std::filesystem::path(TANDEM_SOURCE_DIR) / "sim" / "profiles");
    double dispatch_us[2] = {};
    for (int i = 0; i < 2; ++i) {
        r.variant = i == 0 ? "pull" : "push";
        const ProgramOutput out = test::run_op(r, a3);
        for (const nlohmann::json& s : out.results.extras.at("pipelined_stages").at("stages"))
            if (s.at("stage") == "dispatch") dispatch_us[i] = s.at("span_us").get<double>();
    }
    ASSERT_GT(dispatch_us[0], 0.0);
    EXPECT_GT(dispatch_us[1] / dispatch_us[0], 1.15) << dispatch_us[1] << " against " << dispatch_us[0];
    EXPECT_LT(dispatch_us[1] / dispatch_us[0], 1.6) << dispatch_us[1] << " against " << dispatch_us[0];
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
    for (const char* variant : {"pull", "push"}) {
        d.variant = variant;
        EXPECT_EQ(test::run_op(d).results.verification, Verification::Failed) << variant;
    }
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
