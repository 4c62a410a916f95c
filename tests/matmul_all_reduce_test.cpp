// matmul_all_reduce end to end: every variant verifies on 2, 4 and 8 ranks, with and without a
// bias (m, n), fp16 and bf16 in, fp32 and input-dtype out, on shapes that do not divide into
// tiles (padded); each variant's fault fails verification; the view invariants hold; functional
// and timing-only runs give the same times; the baseline all-reduce follows the topology.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_all_reduce/op.hpp"
#include "kernels/registry.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

const std::vector<std::string>& iris_variants() {
    static const std::vector<std::string> v = {"atomic", "one_shot", "two_shot", "ring"};
    return v;
}

struct Case {
    int ranks, m, k, n;
    std::string dtype = "fp16";
    std::string out_dtype = "fp32";
    std::string bias = "none";
};

RunConfig config(const std::string& variant, const Case& c, bool timing_only = false) {
    RunConfig cfg;
    cfg.op = "matmul_all_reduce";
    cfg.variant = variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.dtype = c.dtype;
    cfg.out_dtype = c.out_dtype;
    cfg.bias = c.bias;
    cfg.timing_only = timing_only;
    cfg.quiet = true;
    return cfg;
}

ProgramOutput run(RunConfig cfg, const std::string& fault = "", const std::string& soc = "") {
    cfg.fault = fault;
    const Profile p = soc.empty() ? test::b1_profile()
                                  : load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/" + soc + ".toml");
    apply_profile_defaults(cfg, p);
    validate_run_config(cfg, buffer_limits_of(p));
    return run_program(cfg, p);
}

std::string describe(const std::string& v, const Case& c) {
    return v + " n=" + std::to_string(c.ranks) + " " + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
           std::to_string(c.n) + " " + c.dtype + "->" + c.out_dtype + " bias " + c.bias;
}

void expect_verifies(const std::string& v, const Case& c) {
    SCOPED_TRACE(describe(v, c));
    const ProgramOutput out = run(config(v, c));
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    const ViewTimes& t = out.results.times;
    EXPECT_LE(t.compute_only_us, t.pipelined_us);
    EXPECT_GT(t.seq_comm_us, 0.0);
}

TEST(MatmulAllReduce, IsRegisteredWithItsVariants) {
    const kernels::OpDesc& op = kernels::find_op("matmul_all_reduce");
    EXPECT_EQ(op.title, "GEMM AllReduce");
    EXPECT_EQ(op.variants.front().name, "atomic");
    for (const std::string& v : iris_variants()) EXPECT_NE(op.find_variant(v), nullptr) << v;
    kernels::OpParams p;
    p.ranks = 4;
    p.m = 128;
    p.n = 256;
    p.out_dtype = DType::F32;
    EXPECT_DOUBLE_EQ(op.comm_payload_bytes(p), 2.0 * 3 / 4 * 128 * 256 * 4);
}

TEST(MatmulAllReduce, VerifiesOn2_4And8Ranks) {
    for (const std::string& v : iris_variants()) {
        expect_verifies(v, Case{2, 256, 512, 512});
        expect_verifies(v, Case{4, 256, 256, 512});
        expect_verifies(v, Case{8, 128, 256, 256});
    }
}

TEST(MatmulAllReduce, BiasIsAddedOnce) {
    for (const std::string& v : iris_variants()) {
        expect_verifies(v, Case{2, 256, 256, 512, "fp16", "fp32", "n"});
        expect_verifies(v, Case{4, 256, 256, 256, "fp16", "fp32", "m"});
    }
}

TEST(MatmulAllReduce, Bf16AndLowPrecisionOutputs) {
    for (const std::string& v : iris_variants()) {
        expect_verifies(v, Case{2, 256, 256, 512, "bf16", "fp32"});
        expect_verifies(v, Case{2, 256, 256, 512, "fp16", "fp16", "n"});
        expect_verifies(v, Case{4, 256, 256, 256, "bf16", "bf16", "m"});
    }
}

TEST(MatmulAllReduce, ShapesThatDoNotDivideIntoTilesArePadded) {
    for (const std::string& v : iris_variants()) {
        expect_verifies(v, Case{2, 200, 300, 333, "fp16", "fp32", "n"});
        expect_verifies(v, Case{4, 130, 100, 270, "bf16", "bf16", "m"});
    }
}

TEST(MatmulAllReduce, EachVariantsFaultFailsVerification) {
    const kernels::OpDesc& op = kernels::find_op("matmul_all_reduce");
    for (const std::string& v : iris_variants()) {
        const kernels::VariantDesc* d = op.find_variant(v);
        ASSERT_NE(d, nullptr);
        ASSERT_FALSE(d->faults.empty()) << v;
        for (const std::string& fault : d->faults) {
            // The fix-up's fault acts only under a stream-K schedule: tests/stream_k_test.cpp.
            if (fault == "skip_fixup_partial") continue;
            const ProgramOutput out = run(config(v, Case{4, 256, 256, 512}), fault);
            EXPECT_EQ(out.results.verification, Verification::Failed) << v << " " << fault;
        }
    }
}

TEST(MatmulAllReduce, ViewInvariants) {
    for (const std::string& v : iris_variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = run(config(v, Case{2, 1024, 1024, 1024}, true));
        const ViewTimes& t = out.results.times;
        const RunMetrics m = compute_metrics(out.results.id, t);
        EXPECT_LE(t.compute_only_us, t.pipelined_us);
        EXPECT_LE(t.pipelined_us, m.sequential_us);  // 2 ranks: every variant overlaps here
        EXPECT_DOUBLE_EQ(m.sequential_us, t.seq_comm_us + t.seq_compute_us);
        const nlohmann::json j = to_json(out.results);
        for (const std::string& key : contract_keys()) EXPECT_TRUE(j.contains(key)) << key;
    }
}

TEST(MatmulAllReduce, FunctionalAndTimingOnlyGiveTheSameTimes) {
    for (const std::string& v : iris_variants()) {
        SCOPED_TRACE(v);
        const Case c{4, 256, 512, 512, "fp16", "fp32", "n"};
        const ProgramOutput f = run(config(v, c));
        const ProgramOutput t = run(config(v, c, true));
        EXPECT_EQ(f.results.times.compute_only_us, t.results.times.compute_only_us);
        EXPECT_EQ(f.results.times.seq_comm_us, t.results.times.seq_comm_us);
        EXPECT_EQ(f.results.times.seq_compute_us, t.results.times.seq_compute_us);
        EXPECT_EQ(f.results.times.pipelined_us, t.results.times.pipelined_us);
    }
}

// On an A3 profile (ring interconnect) the baseline all-reduce is the ring algorithm, and the
// variants still verify.
TEST(MatmulAllReduce, RingTopologyProfile) {
    for (const std::string& v : iris_variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = run(config(v, Case{4, 256, 256, 512}), "", "Ascend910_9372");
        EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
        EXPECT_GT(out.results.times.seq_comm_us, 0.0);
    }
}

}  // namespace
}  // namespace tandem::host
