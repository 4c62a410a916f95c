// Functional runs generate their inputs straight into each rank's GM (host/run/op_session.hpp
// run_op_views_in_place): the views handed to the golden hold exactly make_op_inputs' values
// (padded tensors, split and replicated B, biases, fp16 and bf16), the golden from them equals
// the golden from the host matrices, and the outputs equal those of a run with host inputs.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "host/run/op_session.hpp"
#include "host/run/op_inputs.hpp"
#include "host/ops/op_facade.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "kernels/registry.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace inputs_in_gm_test {

struct Case {
    std::string op, variant;
    int ranks, m, k, n;
    std::string dtype, out_dtype, bias;
};

ResolvedRun config_of(const Case& c, const Profile& p) {
    RunRequest cfg;
    cfg.op = c.op;
    cfg.variant = c.variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.dtype = parse_dtype_text(c.dtype);
    cfg.out_dtype = parse_dtype_text(c.out_dtype);
    cfg.bias = parse_bias_text(c.bias);
    return resolve_run(cfg, p);
}

void expect_same_matrix(const HostMatrix& in_gm, const HostMatrix& host, const std::string& what) {
    ASSERT_EQ(in_gm.rows, host.rows) << what;
    ASSERT_EQ(in_gm.cols, host.cols) << what;
    ASSERT_EQ(in_gm.esize, host.esize) << what;
    ASSERT_NE(in_gm.view, nullptr) << what << ": not a view of GM";
    for (int r = 0; r < host.rows; ++r) {
        const std::vector<std::byte> got(in_gm.row(r), in_gm.row(r) + std::size_t(in_gm.cols) * in_gm.esize);
        const std::vector<std::byte> want(host.row(r), host.row(r) + std::size_t(host.cols) * host.esize);
        ASSERT_EQ(got, want) << what << " row " << r;
    }
}

class InputsInGm : public ::testing::TestWithParam<Case> {};

TEST_P(InputsInGm, HoldMakeOpInputsValuesAndGiveTheSameGoldenAndOutputs) {
    const Profile p = test::b1_profile();
    const ResolvedRun cfg = config_of(GetParam(), p);
    const kernels::OpParams& params = cfg.params;
    const kernels::Sharding& sharding = cfg.sharding();
    const OpInputs host = make_inputs(cfg);

    bool checked = false;
    const ViewsOutcome in_place = run_op_views_in_place(p, cfg, [&](const OpInputs& in_gm) {
        ASSERT_EQ(in_gm.dtype, host.dtype);
        ASSERT_EQ(in_gm.a.size(), host.a.size());
        ASSERT_EQ(in_gm.b_t.size(), host.b_t.size());
        for (std::size_t r = 0; r < host.a.size(); ++r) expect_same_matrix(in_gm.a[r], host.a[r], "A_" + std::to_string(r));
        for (std::size_t r = 0; r < host.b_t.size(); ++r) expect_same_matrix(in_gm.b_t[r], host.b_t[r], "B^T_" + std::to_string(r));
        EXPECT_EQ(in_gm.bias, host.bias);
        EXPECT_EQ(golden_output(sharding, params, in_gm), golden_output(sharding, params, host));
        checked = true;
    });
    EXPECT_TRUE(checked);
    const ViewsOutcome copied = run_op_views(p, cfg, &host);
    ASSERT_EQ(in_place.out.size(), copied.out.size());
    for (std::size_t r = 0; r < copied.out.size(); ++r) {
        const std::span<const float> x = in_place.out[r].floats(), y = copied.out[r].floats();
        EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << "rank " << r;
    }
    EXPECT_EQ(in_place.slowest.pipelined_us, copied.slowest.pipelined_us);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, InputsInGm,
    ::testing::Values(
        // A by rows, B replicated (one B^T copied to every rank).
        Case{"allgather_gemm", "streaming", 2, 512, 256, 256, "fp16", "fp32", "none"},
        // A by K columns, B replicated; ragged M and N (padded), bias per column, fp16 out.
        Case{"all_gather_matmul", "staged", 2, 200, 512, 150, "fp16", "fp16", "n"},
        // B split by columns, bf16, bias per row.
        Case{"matmul_all_scatter", "bulk_sync", 2, 200, 160, 1024, "bf16", "bf16", "m"},
        // K per rank (summed), bias per row; the Ascend replica's padded tensors.
        Case{"matmul_all_reduce", "one_shot", 2, 256, 256, 256, "bf16", "fp32", "m"},
        Case{"matmul_all_reduce", "ascend", 2, 300, 256, 256, "fp16", "fp16", "none"},
        // fp32 inputs (4-byte elements), K per rank, ragged M and N, bias per column.
        Case{"matmul_reduce_scatter", "atomic", 2, 200, 300, 512, "fp32", "fp32", "n"}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.op + "_" + i.param.variant; });

TEST(InputsInGm, WhatRunsBesideTheViewsThrowingFailsTheCall) {
    const Profile p = test::b1_profile();
    const ResolvedRun cfg = config_of(Case{"allgather_gemm", "streaming", 2, 256, 256, 256, "fp16", "fp32", "none"}, p);
    EXPECT_THROW(run_op_views_in_place(p, cfg, [](const OpInputs&) { throw std::runtime_error("golden failed"); }),
                 std::runtime_error);
}

}  // namespace inputs_in_gm_test
}  // namespace tandem::host
