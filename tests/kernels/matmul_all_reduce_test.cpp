// matmul_all_reduce's Iris variants, what is their own (tests/kernels/op_conformance_test.cpp checks what
// every op must do): the op's registration and payload; on 2 ranks every variant overlaps (the
// pipelined view beats the sequential one) and the results carry the contract's keys; the
// baseline all-reduce follows the topology (ring profile).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_all_reduce/op.hpp"
#include "kernels/registry.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace matmul_all_reduce_test {

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

RunRequest config(const std::string& variant, const Case& c, bool timing_only = false) {
    RunRequest cfg;
    cfg.op = "matmul_all_reduce";
    cfg.variant = variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.dtype = parse_dtype_text(c.dtype);
    cfg.out_dtype = parse_dtype_text(c.out_dtype);
    cfg.bias = parse_bias_text(c.bias);
    cfg.timing_only = timing_only;
    return cfg;
}

ProgramOutput run(RunRequest cfg, const std::string& fault = "", const std::string& soc = "") {
    cfg.fault = fault;
    return test::run_op(cfg, soc.empty() ? test::b1_profile() : test::profile_named(soc));
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

// On a double ring (test::double_ring_profile) the baseline all-reduce is the ring algorithm, and the
// variants still verify.
TEST(MatmulAllReduce, RingTopologyProfile) {
    for (const std::string& v : iris_variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = test::run_op(config(v, Case{4, 256, 256, 512}), test::double_ring_profile());
        EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
        EXPECT_GT(out.results.times.seq_comm_us, 0.0);
    }
}

}  // namespace matmul_all_reduce_test
}  // namespace tandem::host
