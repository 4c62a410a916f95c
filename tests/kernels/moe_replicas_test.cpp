// moe_ffn's replicas of the two published MegaMoE versions (kernels/moe_ffn/README.md):
// `expert_major` (V1) and `baseline` verify on EP 2, 4 and 8 with every router and with the
// clusters split as published (24) or small (4); timing-only gives the functional times; V1's
// per-M knob table and the FrontReorder's sort paths are the published host's.
#include <gtest/gtest.h>

#include <string>

#include "host/run/program.hpp"
#include "kernels/moe_ffn/expert_major.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/published_front.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace moe_replicas_test {

using kernels::moe::MoeShape;

RunRequest replica(const std::string& variant, int ranks, int m, int routing, int clusters = 4) {
    RunRequest r;
    r.op = "moe_ffn";
    r.variant = variant;
    r.ranks = ranks;
    r.m = m;
    r.k = 256;
    r.n = 512;
    r.knobs["routing"] = routing;
    r.knobs["topk"] = 4;
    r.knobs["experts_per_rank"] = 4;
    r.compute_blocks = clusters;
    r.comm_blocks = 2 * clusters;  // one MIX launch: two AIVs per cluster
    return r;
}

TEST(MoeReplicas, VerifyOnEp248WithEveryRouter) {
    struct Case {
        int ranks, m, routing, clusters;
    };
    for (const char* variant : {"expert_major", "baseline"}) {
        for (const Case& c : {Case{2, 16, 1, 4}, Case{4, 32, 2, 4}, Case{8, 16, 0, 4}, Case{8, 16, 1, 6}, Case{4, 48, 0, 24}}) {
            const ProgramOutput out = test::run_op(replica(variant, c.ranks, c.m, c.routing, c.clusters));
            EXPECT_EQ(out.results.verification, Verification::Passed)
                << variant << " ranks " << c.ranks << " M " << c.m << " routing " << c.routing << " clusters " << c.clusters << "\n"
                << out.failure_report;
        }
    }
}

TEST(MoeReplicas, TimingOnlyEqualsFunctional) {
    for (const char* variant : {"expert_major", "baseline"}) {
        RunRequest r = replica(variant, 4, 32, 2);
        const ProgramOutput functional = test::run_op(r);
        r.timing_only = true;
        const ProgramOutput timing = test::run_op(r);
        EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us) << variant;
        EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us) << variant;
    }
}

TEST(MoeReplicas, RefuseAivBlocksThatAreNotTwoPerCluster) {
    RunRequest r = replica("expert_major", 2, 16, 0);
    r.comm_blocks = 6;
    EXPECT_NE(test::refusal_of(r).find("twice"), std::string::npos) << test::refusal_of(r);
    r = replica("baseline", 2, 16, 0, 2);
    EXPECT_NE(test::refusal_of(r).find("at least 3"), std::string::npos) << test::refusal_of(r);
}

MoeShape published(int ranks, int m) {
    MoeShape s;
    s.ranks = ranks;
    s.m = m;
    s.k = 7168;
    s.n = 4096;
    return s;  // topK 8 and 16 experts per rank by default
}

TEST(MoeReplicas, ExpertMajorTakesThePublishedKnobsPerM) {
    using kernels::moe::expert_major_schedule;
    const auto m16 = expert_major_schedule(published(8, 16), 24);
    EXPECT_TRUE(m16.canonical);
    EXPECT_EQ(m16.gmm1_cores, 16);
    EXPECT_EQ(m16.swiglu_aivs, 8);
    EXPECT_EQ(m16.join_check, 12);
    EXPECT_EQ(m16.combine_start, 3);
    EXPECT_EQ(m16.unpermute_cut, 13);
    EXPECT_EQ(expert_major_schedule(published(8, 64), 24).combine_start, 0);
    EXPECT_EQ(expert_major_schedule(published(8, 128), 24).combine_start, 3);
    EXPECT_EQ(expert_major_schedule(published(8, 2048), 24).combine_start, 2);
    EXPECT_EQ(expert_major_schedule(published(8, 2048), 24).swiglu_aivs, 16);
    EXPECT_EQ(expert_major_schedule(published(16, 512), 24).join_check, 11);  // EP16 checks from expert 11
    // Outside the table: the struct defaults, inside the shape's experts.
    const auto other = expert_major_schedule(published(8, 100), 24);
    EXPECT_FALSE(other.canonical);
    EXPECT_EQ(other.join_check, 13);
    EXPECT_EQ(other.combine_start, 2);
    MoeShape few = published(8, 16);
    few.experts = 4;
    const auto small = expert_major_schedule(few, 24);
    EXPECT_FALSE(small.canonical);
    EXPECT_LE(small.join_check, 4);
    EXPECT_LE(small.combine_start, 3);
}

TEST(MoeReplicas, FrontReorderTakesThePublishedSortPath) {
    using kernels::moe::SortPath;
    using kernels::moe::sort_path;
    // FullLoad while 36 align32(R) + 4 x 128 + 13 K + 64 fits 192 KiB (R = 8M; K = 7168).
    EXPECT_EQ(sort_path(published(8, 128)), SortPath::FullLoad);
    EXPECT_EQ(sort_path(published(8, 356)), SortPath::FullLoad);
    EXPECT_EQ(sort_path(published(8, 357)), SortPath::OneCore);
    EXPECT_EQ(sort_path(published(8, 512)), SortPath::OneCore);  // R = 4096 <= 6144
    EXPECT_EQ(sort_path(published(8, 1024)), SortPath::MultiCore);
    EXPECT_EQ(sort_path(published(8, 2048)), SortPath::MultiCore);
}

TEST(MoeReplicas, EverySortPathVerifies) {
    // FullLoad, OneCore and MultiCore (R = M x topK above 6144 keys) at a small K, functional.
    for (int m : {16, 1400, 1700}) {
        RunRequest r = replica("expert_major", 2, m, 0);
        r.n = 256;
        const ProgramOutput out = test::run_op(r);
        EXPECT_EQ(out.results.verification, Verification::Passed) << "M " << m << "\n" << out.failure_report;
    }
}

}  // namespace moe_replicas_test
}  // namespace tandem::host
