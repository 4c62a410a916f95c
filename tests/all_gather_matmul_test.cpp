// all_gather_matmul (Iris's K-sharded AllGather + GEMM) end to end: every variant verifies on
// 2, 4 and 8 ranks with ragged M and N, with bias, in fp16 and bf16, fp32 and low-precision out;
// each variant's fault fails verification; the views keep their invariants; functional and
// timing-only times agree; the traffic each variant puts on the links is exactly what its
// algorithm moves (pull re-reads remote A once per N tile).
#include <gtest/gtest.h>

#include <string>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

// Small tiles keep the test fast; K is two 64-deep K tiles per rank.
RunConfig config(const std::string& variant, int ranks, int m, int n, int k_tiles_per_rank = 2) {
    RunConfig c;
    c.op = "all_gather_matmul";
    c.variant = variant;
    c.ranks = ranks;
    c.m = m;
    c.n = n;
    c.base_m = 64;
    c.base_n = 64;
    c.k = ranks * 64 * k_tiles_per_rank;
    c.compute_blocks = 4;
    c.comm_blocks = 4;
    return c;
}

ProgramOutput run(RunConfig cfg) {
    const Profile p = test::b1_profile();
    apply_profile_defaults(cfg, p);
    validate_run_config(cfg, buffer_limits_of(p));
    return run_program(cfg, p);
}

void expect_views_consistent(const ProgramOutput& out) {
    const ViewTimes& t = out.results.times;
    const RunMetrics m = compute_metrics(out.results.id, t);
    EXPECT_GT(t.compute_only_us, 0.0);
    EXPECT_GT(t.seq_comm_us, 0.0);
    EXPECT_LE(t.compute_only_us, t.pipelined_us);
    EXPECT_DOUBLE_EQ(m.sequential_us, t.seq_comm_us + t.seq_compute_us);
}

struct Case {
    std::string variant;
    int ranks;
};

class AllGatherMatmulVariants : public ::testing::TestWithParam<Case> {};

// Ragged M and N (padded to tiles), fp16 in, fp32 out, no bias.
TEST_P(AllGatherMatmulVariants, VerifiesOnRaggedShapes) {
    const Case c = GetParam();
    const ProgramOutput out = run(config(c.variant, c.ranks, 200, 150));
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    expect_views_consistent(out);
}

// Bias on rows with bf16 in and out, bias on columns with fp16 in and out.
TEST_P(AllGatherMatmulVariants, VerifiesWithBiasAndLowPrecision) {
    const Case c = GetParam();
    RunConfig a = config(c.variant, c.ranks, 128, 130);
    a.bias = "m";
    a.dtype = "bf16";
    a.out_dtype = "bf16";
    const ProgramOutput ra = run(a);
    EXPECT_EQ(ra.results.verification, Verification::Passed) << ra.failure_report;
    RunConfig b = config(c.variant, c.ranks, 70, 128);
    b.bias = "n";
    b.out_dtype = "fp16";
    const ProgramOutput rb = run(b);
    EXPECT_EQ(rb.results.verification, Verification::Passed) << rb.failure_report;
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
    return i.param.variant + "_" + std::to_string(i.param.ranks) + "ranks";
}

INSTANTIATE_TEST_SUITE_P(AllRanks, AllGatherMatmulVariants,
                         ::testing::Values(Case{"pull", 2}, Case{"pull", 4}, Case{"pull", 8}, Case{"push", 2},
                                           Case{"push", 4}, Case{"push", 8}, Case{"staged", 2}, Case{"staged", 4},
                                           Case{"staged", 8}),
                         case_name);

TEST(AllGatherMatmul, BiasWithFp32OutputVerifies) {
    for (const char* v : {"pull", "push", "staged"}) {
        RunConfig c = config(v, 4, 100, 100);
        c.bias = "n";
        const ProgramOutput out = run(c);
        EXPECT_EQ(out.results.verification, Verification::Passed) << v << "\n" << out.failure_report;
    }
}

TEST(AllGatherMatmul, EachVariantsFaultFailsVerification) {
    const std::pair<const char*, const char*> faults[] = {{"pull", "skip_remote_k_tile"},
                                                          {"push", "skip_inbox_store"},
                                                          {"push", "skip_remote_k_tile"},
                                                          {"staged", "skip_staged_copy"}};
    for (const auto& [variant, fault] : faults) {
        RunConfig c = config(variant, 2, 128, 128);
        c.fault = fault;
        const ProgramOutput out = run(c);
        EXPECT_EQ(out.results.verification, Verification::Failed) << variant << " " << fault;
    }
}

TEST(AllGatherMatmul, FunctionalAndTimingOnlyTimesAgree) {
    for (const char* v : {"pull", "push", "staged"}) {
        RunConfig c = config(v, 4, 192, 128);
        c.bias = "m";
        const ProgramOutput functional = run(c);
        c.timing_only = true;
        const ProgramOutput timed = run(c);
        EXPECT_EQ(functional.results.times.compute_only_us, timed.results.times.compute_only_us) << v;
        EXPECT_EQ(functional.results.times.seq_comm_us, timed.results.times.seq_comm_us) << v;
        EXPECT_EQ(functional.results.times.seq_compute_us, timed.results.times.seq_compute_us) << v;
        EXPECT_EQ(functional.results.times.pipelined_us, timed.results.times.pipelined_us) << v;
    }
}

// The all-gather's payload per rank: M x K/n of fp16 from each of the n-1 peers.
std::int64_t payload_bytes(const RunConfig& c) { return std::int64_t{c.m} * (c.k / c.ranks) * 2 * (c.ranks - 1); }

TEST(AllGatherMatmul, PullReReadsRemoteAOncePerNTile) {
    RunConfig c = config("pull", 4, 128, 5 * 64);  // 5 N tiles
    c.timing_only = true;
    const ProgramOutput out = run(c);
    for (const RankViewTimes& t : out.bench.per_rank) {
        EXPECT_EQ(t.remote_load_bytes, 5 * payload_bytes(c));
        EXPECT_EQ(t.remote_store_bytes, 0);
    }
    const nlohmann::json j = to_json(out.results);
    EXPECT_EQ(j.at("comm_bytes_per_rank").get<std::int64_t>(), 5 * payload_bytes(c));
    EXPECT_DOUBLE_EQ(j.at("allgather_bytes").get<double>(), static_cast<double>(payload_bytes(c)));
    EXPECT_GT(j.at("comm_gib_s").get<double>(), 0.0);
}

TEST(AllGatherMatmul, PushAndStagedMoveTheShardsOnce) {
    RunConfig push = config("push", 4, 128, 5 * 64);
    push.timing_only = true;
    for (const RankViewTimes& t : run(push).bench.per_rank) {
        EXPECT_EQ(t.remote_store_bytes, payload_bytes(push));  // every tile stored into each peer's inbox once
        EXPECT_EQ(t.remote_load_bytes, 0);
    }
    RunConfig staged = config("staged", 4, 128, 5 * 64);
    staged.timing_only = true;
    for (const RankViewTimes& t : run(staged).bench.per_rank) {
        EXPECT_EQ(t.remote_load_bytes, payload_bytes(staged));  // every peer tile fetched once
        EXPECT_EQ(t.remote_store_bytes, 0);
    }
}

TEST(AllGatherMatmul, StagedKnobsChangeTheScheduleNotTheResult) {
    for (int kpf : {1, 3}) {
        for (int stages : {1, 3}) {
            RunConfig c = config("staged", 2, 128, 128, 3);
            c.knobs = {{"k_per_flag", kpf}, {"stages", stages}};
            const ProgramOutput out = run(c);
            EXPECT_EQ(out.results.verification, Verification::Passed) << kpf << " " << stages;
            const nlohmann::json j = to_json(out.results);
            EXPECT_EQ(j.at("k_per_flag").get<int>(), kpf);
            EXPECT_EQ(j.at("stages").get<int>(), stages);
        }
    }
}

TEST(AllGatherMatmul, RefusesShardsThatAreNotWholeKTiles) {
    RunConfig c = config("pull", 4, 128, 128);
    c.k = 4 * 64 + 32;
    try {
        run(c);
        FAIL() << "accepted K that does not split into whole K tiles";
    } catch (const SimError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("--gk 288"), std::string::npos) << msg;
        EXPECT_NE(msg.find("n*base-n"), std::string::npos) << msg;
    }
    RunConfig s = config("staged", 2, 128, 128);
    s.knobs = {{"k_per_flag", 5}};
    EXPECT_THROW(run(s), SimError);
}

}  // namespace
}  // namespace tandem::host
