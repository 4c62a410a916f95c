// Warm-up runs (RunRequest::warmup_runs, --warmup-runs): each view run untimed before it is
// timed, as the measured hosts warm up. What they leave is the chip's L2: a view after its
// warm-ups starts from the L2 a later view of a run without them starts from, and they move no
// data (sim/MODEL.md "What it leaves out", warm-up).
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "host/ops/op_facade.hpp"
#include "host/params/param_schema.hpp"
#include "kernels/param_error.hpp"
#include "host/run/op_session.hpp"
#include "host/run/op_inputs.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace warmup_runs_test {

// The single-chip GEMM (one kernel, the same in every view) on a profile whose cores' reads are
// bound by their requests in flight, so that a read from HBM is slower than one from the L2 and a
// cold view is visibly slower than a warm one.
Profile requests_bound_profile() {
    Profile p = test::b1_profile();
    p.pipes.mte2_read_bytes_in_flight = 8192;
    return p;
}

RunRequest gemm_request(int warmup_runs) {
    RunRequest r;
    r.op = "gemm";
    r.variant = "pto_performance";
    r.ranks = 1;
    r.m = r.k = r.n = 1536;
    r.timing_only = true;
    r.warmup_runs = warmup_runs;
    return r;
}

// The device time (the profiler's task duration) of the view's one launch on rank 0.
double kernel_us(const ViewsOutcome& o, kernels::ViewKind view) {
    for (const KernelFigures& k : o.per_rank.at(0).kernels)
        if (k.view == view) return k.kernel_us();
    ADD_FAILURE() << "no launch of the view";
    return 0;
}

TEST(WarmupRuns, AViewAfterItsWarmUpsTakesTheWarmTimeOfALaterView) {
    const Profile p = requests_bound_profile();
    const ViewsOutcome cold = run_op_views(p, resolve_run(gemm_request(0), p), nullptr);
    const double cold_first = kernel_us(cold, kernels::ViewKind::ComputeOnly);
    const double warm_later = kernel_us(cold, kernels::ViewKind::Pipelined);  // A and B resident by then
    // The test can fail: without warm-ups the first view reads its inputs from HBM.
    ASSERT_GT(cold_first, warm_later * 1.05);

    const ViewsOutcome warm = run_op_views(p, resolve_run(gemm_request(1), p), nullptr);
    EXPECT_NEAR(kernel_us(warm, kernels::ViewKind::ComputeOnly), warm_later, warm_later * 0.002);
    EXPECT_NEAR(kernel_us(warm, kernels::ViewKind::Pipelined), warm_later, warm_later * 0.002);
    // Warm-ups are not views: one launch per view is reported, as without them.
    EXPECT_EQ(warm.per_rank.at(0).kernels.size(), cold.per_rank.at(0).kernels.size());
}

TEST(WarmupRuns, NoneIsTheRunAsBefore) {
    const Profile p = requests_bound_profile();
    RunRequest unset = gemm_request(0);
    unset.warmup_runs = RunRequest{}.warmup_runs;
    ASSERT_EQ(unset.warmup_runs, 0);
    const ViewsOutcome a = run_op_views(p, resolve_run(unset, p), nullptr);
    const ViewsOutcome b = run_op_views(p, resolve_run(gemm_request(0), p), nullptr);
    EXPECT_EQ(a.per_rank.at(0).compute_only_us, b.per_rank.at(0).compute_only_us);
    EXPECT_EQ(a.per_rank.at(0).pipelined_us, b.per_rank.at(0).pipelined_us);
    EXPECT_EQ(a.instructions, b.instructions);
    // With warm-ups the machine simulates more: each view once more per warm-up.
    const ViewsOutcome two = run_op_views(p, resolve_run(gemm_request(2), p), nullptr);
    EXPECT_EQ(two.instructions, 3 * a.instructions);
}

// A functional run with warm-ups gives the output it gives without: the warm-ups (timing-only
// launches of the same view, each after the view's reset of its flags) leave nothing the timed
// view reads. The op sums by atomic adds (matmul_all_reduce atomic: every rank adds its partial
// into every rank's output), so a flag or output a warm-up left set would show.
TEST(WarmupRuns, LeaveTheOutputAsWithout) {
    const Profile p = test::b1_profile();
    auto run_with = [&](int warmups) {
        RunRequest r;
        r.op = "matmul_all_reduce";
        r.variant = "atomic";
        r.ranks = 2;
        r.m = 256;
        r.k = 256;
        r.n = 256;
        r.warmup_runs = warmups;
        const ResolvedRun run = resolve_run(r, p);
        const OpInputs in = make_op_inputs(run.sharding(), run.params);
        return run_op_views(p, run, &in);
    };
    const ViewsOutcome none = run_with(0);
    const ViewsOutcome two = run_with(2);
    ASSERT_EQ(none.out.size(), 2U);
    ASSERT_EQ(two.out.size(), 2U);
    for (std::size_t r = 0; r < 2; ++r) {
        const std::span<const float> a = none.out[r].floats();
        const std::span<const float> b = two.out[r].floats();
        ASSERT_EQ(a.size(), b.size());
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << "rank " << r;
    }
}

TEST(WarmupRuns, OutsideTheRangeIsRefusedNamingIt) {
    const Profile p = test::b1_profile();
    RunRequest r = gemm_request(-1);
    EXPECT_THROW(resolve_run(r, p), kernels::ParamError);
    r.warmup_runs = kMaxWarmupRuns + 1;
    try {
        resolve_run(r, p);
        FAIL() << "accepted";
    } catch (const kernels::ParamError& e) {
        EXPECT_NE(std::string(e.what()).find("warm"), std::string::npos) << e.what();
    }
}

}  // namespace warmup_runs_test
}  // namespace tandem::host
