// all_gather_matmul (Iris's K-sharded AllGather + GEMM), what is its own (tests/kernels/op_conformance_test.cpp
// checks what every op must do): the traffic each variant puts on the links is exactly what its
// algorithm moves (pull re-reads remote A once per N tile); staged's knobs change the schedule,
// not the result; shards that are not whole K tiles are refused.
#include <gtest/gtest.h>

#include <string>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace all_gather_matmul_test {

// Small tiles keep the test fast; K is two 64-deep K tiles per rank.
RunRequest config(const std::string& variant, int ranks, int m, int n, int k_tiles_per_rank = 2) {
    RunRequest c;
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

// The all-gather's payload per rank: M x K/n of fp16 from each of the n-1 peers.
std::int64_t payload_bytes(const RunRequest& c) { return std::int64_t{c.m} * (c.k / c.ranks) * 2 * (c.ranks - 1); }

TEST(AllGatherMatmul, PullReReadsRemoteAOncePerNTile) {
    RunRequest c = config("pull", 4, 128, 5 * 64);  // 5 N tiles
    c.timing_only = true;
    const ProgramOutput out = test::run_op(c);
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
    RunRequest push = config("push", 4, 128, 5 * 64);
    push.timing_only = true;
    for (const RankViewTimes& t : test::run_op(push).bench.per_rank) {
        EXPECT_EQ(t.remote_store_bytes, payload_bytes(push));  // every tile stored into each peer's inbox once
        EXPECT_EQ(t.remote_load_bytes, 0);
    }
    RunRequest staged = config("staged", 4, 128, 5 * 64);
    staged.timing_only = true;
    for (const RankViewTimes& t : test::run_op(staged).bench.per_rank) {
        EXPECT_EQ(t.remote_load_bytes, payload_bytes(staged));  // every peer tile fetched once
        EXPECT_EQ(t.remote_store_bytes, 0);
    }
}

TEST(AllGatherMatmul, StagedKnobsChangeTheScheduleNotTheResult) {
    for (int kpf : {1, 3}) {
        for (int stages : {1, 3}) {
            RunRequest c = config("staged", 2, 128, 128, 3);
            c.knobs = {{"k_per_flag", kpf}, {"stages", stages}};
            const ProgramOutput out = test::run_op(c);
            EXPECT_EQ(out.results.verification, Verification::Passed) << kpf << " " << stages;
            const nlohmann::json j = to_json(out.results);
            EXPECT_EQ(j.at("k_per_flag").get<int>(), kpf);
            EXPECT_EQ(j.at("stages").get<int>(), stages);
        }
    }
}

TEST(AllGatherMatmul, RefusesShardsThatAreNotWholeKTiles) {
    RunRequest c = config("pull", 4, 128, 128);
    c.k = 4 * 64 + 32;
    const std::string msg = test::refusal_of(c);
    EXPECT_NE(msg.find("--gk 288"), std::string::npos) << msg;
    EXPECT_NE(msg.find("n*base-n"), std::string::npos) << msg;
    RunRequest s = config("staged", 2, 128, 128);
    s.knobs = {{"k_per_flag", 5}};
    EXPECT_THROW(test::run_op(s), SimError);
}

}  // namespace all_gather_matmul_test
}  // namespace tandem::host
