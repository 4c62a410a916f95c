// moe_ffn (the MegaMoE layer: dispatch, int8 GMM1 -> SwiGLU + quant -> int8 GMM2, combine,
// unpermute), what is its own (tests/kernels/op_conformance_test.cpp checks what every op must do):
// both variants verify on EP 2, 4 and 8 with the seeded routers (the round-robin one in the
// conformance suite); timing-only gives the functional
// times; each fault fails verification; the routing tables hold the published balance; shapes
// the kernels cannot take are refused with the rule.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "host/run/program.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "sim/exec/instr_record.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace moe_ffn_test {

RunRequest moe(const std::string& variant, int ranks, int m, int routing, int k = 256, int n = 512) {
    RunRequest r;
    r.op = "moe_ffn";
    r.variant = variant;
    r.ranks = ranks;
    r.m = m;
    r.k = k;
    r.n = n;
    r.knobs["routing"] = routing;
    r.knobs["topk"] = 4;
    r.knobs["experts_per_rank"] = 4;
    r.compute_blocks = 4;
    r.comm_blocks = 6;
    return r;
}

TEST(MoeFfn, VerifiesOnEp248WithTheSeededRouters) {
    // The round-robin router on 2, 4 and 8 ranks, both variants and both x dtypes: the
    // conformance suite (tests/kernels/op_conformance_test.cpp). Here the seeded routers (uniform 1,
    // Zipf 2), whose experts are unbalanced.
    struct Case {
        const char* variant;
        int ranks, routing;
    };
    for (const Case& c : {Case{"per_expert", 2, 1}, Case{"per_expert", 4, 2}, Case{"per_expert", 8, 1}, Case{"bulk", 4, 1},
                          Case{"bulk", 8, 2}}) {
        const ProgramOutput out = test::run_op(moe(c.variant, c.ranks, 16, c.routing));
        EXPECT_EQ(out.results.verification, Verification::Passed)
            << c.variant << " ranks " << c.ranks << " routing " << c.routing << "\n"
            << out.failure_report;
        EXPECT_GT(out.results.times.pipelined_us, 0.0);
    }
}

TEST(MoeFfn, TimingOnlyEqualsFunctional) {
    for (const char* variant : {"bulk", "per_expert"}) {
        RunRequest r = moe(variant, 4, 16, 2);
        const ProgramOutput functional = test::run_op(r);
        r.timing_only = true;
        const ProgramOutput timing = test::run_op(r);
        EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us) << variant;
        EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us) << variant;
        EXPECT_EQ(functional.results.times.seq_comm_us, timing.results.times.seq_comm_us) << variant;
        EXPECT_EQ(functional.results.times.seq_compute_us, timing.results.times.seq_compute_us) << variant;
    }
}

TEST(MoeFfn, EveryFaultFailsVerification) {
    for (const char* fault : {"skip_last_route", "drop_scale1"}) {
        RunRequest r = moe("per_expert", 2, 16, 1);
        r.fault = fault;
        const ProgramOutput out = test::run_op(r);
        EXPECT_EQ(out.results.verification, Verification::Failed) << fault;
    }
}

TEST(MoeFfn, EachAicStartsItsGmm1KLoopAtItsOwnKTile) {
    // The published K-shuffle: at K 1024 GMM1 has two K tiles of 512, and AIC b starts at K tile
    // b mod 2, so within a tile an odd block loads the weights' second 512 rows (the higher
    // address) before the first. A weight panel is 512 x 256 int8.
    RunRequest r = moe("per_expert", 2, 64, 0, 1024, 512);
    r.timing_only = true;
    RunOutputs logged;
    logged.record_log = true;
    const ProgramOutput out = test::run_op(r, test::b1_profile(), logged);
    std::map<std::pair<int, int>, std::vector<std::int64_t>> panels;  // (rank, block) -> addresses
    for (const InstrRecord& rec : out.bench.pipelined_log)
        if (rec.op == Opcode::TLOAD && rec.stage == kernels::moe::kStageGmm1 && rec.bytes == 512 * 256)
            panels[{rec.rank, rec.block}].push_back(rec.address);
    ASSERT_FALSE(panels.empty());
    int odd = 0, even = 0;
    for (const auto& [where, addr] : panels) {
        ASSERT_GE(addr.size(), 2U) << "rank " << where.first << " block " << where.second;
        const bool starts_high = addr[1] < addr[0];
        EXPECT_EQ(starts_high, where.second % 2 == 1) << "rank " << where.first << " block " << where.second;
        (where.second % 2 == 1 ? odd : even) += 1;
    }
    EXPECT_GT(odd, 0);
    EXPECT_GT(even, 0);
}

TEST(MoeFfn, OverlapBeatsBulkAndComputeOnlyIsTheFloor) {
    RunRequest r = moe("bulk", 8, 64, 0, 1024, 1024);
    r.timing_only = true;
    r.knobs.clear();  // the published topK 8, 16 experts per rank
    r.compute_blocks.reset();
    r.comm_blocks.reset();
    const ProgramOutput bulk = test::run_op(r);
    r.variant = "per_expert";
    const ProgramOutput fused = test::run_op(r);
    EXPECT_LT(fused.results.times.pipelined_us, bulk.results.times.pipelined_us);
    EXPECT_LE(bulk.results.times.compute_only_us, bulk.results.times.pipelined_us);
}

TEST(MoeFfn, RoundRobinRoutingHasThePublishedBalance) {
    // EP8, topK 8, 16 experts per rank, M a multiple of 16: M/16 rows per (source, global expert),
    // M/2 rows per local expert, 8M rows per rank, and a token's 8 routes on one rank.
    kernels::moe::MoeShape s;
    s.ranks = 8;
    s.m = 64;
    s.k = 256;
    s.n = 256;
    const kernels::moe::RouteTables t = kernels::moe::make_route_tables(s);
    for (int src = 0; src < 8; ++src)
        for (int g = 0; g < 128; ++g) EXPECT_EQ(t.count[src][g], 64 / 16);
    for (int d = 0; d < 8; ++d) {
        EXPECT_EQ(t.recv_total[d], 8 * 64);
        for (int e = 0; e < 16; ++e) EXPECT_EQ(t.recv_rows[d][e], 64 / 2);
    }
    for (int tok = 0; tok < 64; ++tok)
        for (int k = 1; k < 8; ++k) EXPECT_EQ(t.expert[3][tok * 8 + k] / 16, t.expert[3][tok * 8] / 16);
}

TEST(MoeFfn, SeededRoutersGiveDistinctExpertsAndZipfIsSkewed) {
    kernels::moe::MoeShape s;
    s.ranks = 4;
    s.m = 256;
    s.routing = kernels::moe::Routing::Zipf;
    const kernels::moe::RouteTables t = kernels::moe::make_route_tables(s);
    for (int tok = 0; tok < s.m; ++tok)
        for (int a = 0; a < 8; ++a)
            for (int b = a + 1; b < 8; ++b) EXPECT_NE(t.expert[0][tok * 8 + a], t.expert[0][tok * 8 + b]);
    // Rank 0 holds the most popular experts: it receives more rows than the last rank.
    EXPECT_GT(t.recv_total[0], t.recv_total[3]);
}

TEST(MoeFfn, RefusesShapesTheKernelsCannotTake) {
    RunRequest r = moe("bulk", 2, 16, 0);
    r.k = 300;
    EXPECT_NE(test::refusal_of(r).find("256"), std::string::npos) << test::refusal_of(r);
    r = moe("bulk", 2, 16, 0);
    r.comm_blocks = 2;
    EXPECT_NE(test::refusal_of(r), "");
}

// The receive buffers hold --max-output-size rows: a rank routed more is refused, naming the rank,
// its rows and the smallest size that fits; exactly enough runs and verifies.
TEST(MoeFfn, MaxOutputSizeBoundsTheRowsARankReceives) {
    RunRequest r = moe("per_expert", 2, 32, 0);  // round-robin: every rank receives M x topK = 128 rows
    r.knobs["max_output_size"] = 127;
    EXPECT_EQ(test::refusal_of(r),
              "--max-output-size 127: rank 0 receives 128 routed rows, more than its receive buffers hold (the rows its "
              "local experts get from every rank's routes); nearest valid: 128");
    r.knobs["max_output_size"] = 0;
    EXPECT_NE(test::refusal_of(r).find("--max-output-size 0: rows a rank's receive buffers hold: 1..2147483647 here"),
              std::string::npos)
        << test::refusal_of(r);
    r.knobs["max_output_size"] = 128;
    EXPECT_EQ(test::refusal_of(r), "");
    const ProgramOutput out = test::run_op(r);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    EXPECT_EQ(out.results.extras.at("max_output_size").get<int>(), 128);
}

}  // namespace moe_ffn_test
}  // namespace tandem::host
