// The fused-ops API (include/tandem/tandem.hpp): outputs against a host GEMM, the same times as
// the command line's views, workspace reuse and its refusals, async calls overlapping on the
// simulated clock, and the runtime pieces it needs (persistent host clocks, parking).
#include <gtest/gtest.h>

#include <cmath>

#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "kernels/registry.hpp"
#include "sim/profile.hpp"
#include "tandem/tandem.hpp"

namespace api_test {

using tandem::api::Context;
using tandem::api::ContextOptions;
using tandem::api::DataType;
using tandem::api::Error;
using tandem::api::OpConfig;
using tandem::api::Tensor;
using tandem::api::Workspace;

// allgather_gemm on `ranks`: A is M/ranks x K per rank, B is K x N, every rank gets C = A x B.
struct AgProblem {
    int ranks = 2;
    int m = 256;
    int k = 256;
    int n = 256;
    int seed = 0;
    std::vector<std::vector<float>> a;  // per rank
    std::vector<float> b;
    std::vector<float> c;  // M x N

    AgProblem(int ranks_, int m_, int k_, int n_, int seed_) : ranks(ranks_), m(m_), k(k_), n(n_), seed(seed_) {
        const int rows = m / ranks;
        for (int r = 0; r < ranks; ++r) {
            std::vector<float> v(static_cast<std::size_t>(rows) * k);
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + r * 3 + seed) % 5) - 2.0f;
            a.push_back(v);
        }
        b.resize(static_cast<std::size_t>(k) * n);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 11 + seed) % 3) - 1.0f;
        c.assign(static_cast<std::size_t>(m) * n, 0.0f);
        for (int i = 0; i < m; ++i) {
            const std::vector<float>& ar = a[static_cast<std::size_t>(i / rows)];
            for (int kk = 0; kk < k; ++kk) {
                const float x = ar[static_cast<std::size_t>(i % rows) * k + kk];
                for (int j = 0; j < n; ++j) c[static_cast<std::size_t>(i) * n + j] += x * b[static_cast<std::size_t>(kk) * n + j];
            }
        }
    }
    Tensor a_on(Context& ctx) const { return ctx.from_host(m / ranks, k, DataType::F16, a); }
    Tensor b_on(Context& ctx) const { return ctx.from_host(k, n, DataType::F16, std::vector<std::vector<float>>(static_cast<std::size_t>(ranks), b)); }
};

void expect_output(const Tensor& out, const AgProblem& p) {
    for (int r = 0; r < p.ranks; ++r) {
        const std::vector<float> got = out.to_host(r);
        ASSERT_EQ(got.size(), p.c.size());
        for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], p.c[i]) << "rank " << r << " element " << i;
    }
}

ContextOptions two_ranks(bool functional = true) {
    ContextOptions o;
    o.ranks = 2;
    o.functional = functional;
    return o;
}

TEST(ApiTest, EveryRegisteredOpIsOffered) {
    Context ctx(two_ranks());
    std::vector<std::string> expected;
    for (const auto* op : tandem::kernels::registered_ops()) expected.push_back(op->name);
    EXPECT_EQ(ctx.ops().names(), expected);
}

TEST(ApiTest, SyncCallComputesTheGemmOnEveryRank) {
    Context ctx(two_ranks());
    const AgProblem p(2, 256, 256, 256, 1);
    Tensor a = p.a_on(ctx), b = p.b_on(ctx);
    Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
    const Workspace ws = ctx.ops().run("allgather_gemm", c, a, b);
    expect_output(c, p);
    EXPECT_TRUE(ws.results().complete);
    EXPECT_GT(ws.results().pipelined_us, 0.0);
    EXPECT_EQ(ws.results().per_rank_us.size(), 2u);
    EXPECT_EQ(ws.results().base_m, 128);  // the tile it ran with: the default
    EXPECT_EQ(ws.results().base_n, 256);
    EXPECT_EQ(ws.calls(), 1);
}

// The API's times are the command line's for the same simulation (all three views).
TEST(ApiTest, TimesAreTheCommandLinesViews) {
    Context ctx(two_ranks());
    const AgProblem p(2, 512, 512, 512, 2);
    Tensor a = p.a_on(ctx), b = p.b_on(ctx);
    Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
    OpConfig cfg;
    cfg.all_views = true;
    const Workspace ws = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, cfg);

    tandem::host::RunRequest rc;
    rc.op = "allgather_gemm";
    rc.ranks = 2;
    rc.m = rc.k = rc.n = 512;
    rc.timing_only = true;
    const tandem::Profile profile = tandem::load_profile_by_soc(rc.soc, tandem::default_profile_dir());
    const tandem::host::ProgramOutput cli = tandem::host::run_program(tandem::host::resolve_run(rc, profile), profile);
    EXPECT_DOUBLE_EQ(ws.results().pipelined_us, cli.results.times.pipelined_us);
    EXPECT_DOUBLE_EQ(*ws.results().compute_only_us, cli.results.times.compute_only_us);
    EXPECT_DOUBLE_EQ(*ws.results().seq_comm_us, cli.results.times.seq_comm_us);
    EXPECT_DOUBLE_EQ(*ws.results().seq_compute_us, cli.results.times.seq_compute_us);
}

TEST(ApiTest, TimingOnlyGivesTheSameTimes) {
    const AgProblem p(2, 256, 512, 256, 0);
    double times[2];
    for (int functional = 0; functional < 2; ++functional) {
        Context ctx(two_ranks(functional == 1));
        Tensor a = ctx.zeros(p.m / 2, p.k, DataType::F16), b = ctx.zeros(p.k, p.n, DataType::F16);
        Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
        times[functional] = ctx.ops().run("allgather_gemm", c, a, b).results().pipelined_us;
    }
    EXPECT_EQ(times[0], times[1]);
}

// A reused workspace: new data each call, flags reset by the call, right answers every time.
TEST(ApiTest, ReusedWorkspaceSeesNoStaleFlags) {
    Context ctx(two_ranks());
    Workspace ws;
    double first_us = 0;
    for (int call = 0; call < 3; ++call) {
        const AgProblem p(2, 256, 256, 256, call + 3);
        Tensor a = p.a_on(ctx), b = p.b_on(ctx);
        Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
        ws = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, {}, ws);
        expect_output(c, p);
        if (call == 0) first_us = ws.results().pipelined_us;
        EXPECT_EQ(ws.results().pipelined_us, first_us) << "call " << call;  // same work, same time
    }
    EXPECT_EQ(ws.calls(), 3);
}

TEST(ApiTest, BadCallsAreClearErrors) {
    Context ctx(two_ranks());
    const AgProblem p(2, 256, 256, 256, 0);
    Tensor a = p.a_on(ctx), b = p.b_on(ctx);
    Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
    const Workspace ws = ctx.ops().run("allgather_gemm", c, a, b);
    auto message = [&](auto&& f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    Tensor c_wide = ctx.zeros(p.m, 512, DataType::F32);
    EXPECT_NE(message([&] { ctx.ops().run("allgather_gemm", c_wide, a, b); }).find("B is 256 x 256 fp16 per rank; this call needs 256 x 512"), std::string::npos);
    Tensor a16 = ctx.zeros(128, 256, DataType::BF16);
    EXPECT_NE(message([&] { ctx.ops().run("allgather_gemm", c, a16, b); }).find("A is bf16 and B is fp16"), std::string::npos);
    Tensor a_big = ctx.zeros(128, 512, DataType::F16), b_big = ctx.zeros(512, 256, DataType::F16);
    EXPECT_NE(message([&] { ctx.ops().run("allgather_gemm", c, a_big, b_big, nullptr, false, {}, ws); })
                  .find("the workspace was made for another shape or configuration"),
              std::string::npos);
    EXPECT_NE(message([&] { ctx.ops().run("no_such_op", c, a, b); }).find("no such op"), std::string::npos);
    Tensor bias = ctx.zeros(1, 256, DataType::F16);
    EXPECT_NE(message([&] { ctx.ops().run("allgather_gemm", c, a, b, &bias); }).find("bias"), std::string::npos);
    // The context still works after refused calls.
    ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, {}, ws);
    expect_output(c, p);
}

// Two async calls on their own streams overlap on the simulated clock; outputs stay right
// (each stream's kernels run on cores of their own: sim/core/stream_cores.hpp).
TEST(ApiTest, AsyncCallsOverlap) {
    Context ctx(two_ranks());
    const AgProblem p1(2, 512, 512, 512, 5), p2(2, 512, 512, 512, 6);
    Tensor a1 = p1.a_on(ctx), b1 = p1.b_on(ctx), a2 = p2.a_on(ctx), b2 = p2.b_on(ctx);
    Tensor c1 = ctx.zeros(512, 512, DataType::F32), c2 = ctx.zeros(512, 512, DataType::F32);
    const Workspace w1 = ctx.ops().run("allgather_gemm", c1, a1, b1, nullptr, true);
    EXPECT_FALSE(w1.results().complete);
    EXPECT_THROW(c1.to_host(0), Error);  // still being written
    const Workspace w2 = ctx.ops().run("allgather_gemm", c2, a2, b2, nullptr, true);
    ctx.barrier();
    ASSERT_TRUE(w1.results().complete);
    ASSERT_TRUE(w2.results().complete);
    const double elapsed = std::max(w1.results().end_us, w2.results().end_us) - std::min(w1.results().start_us, w2.results().start_us);
    EXPECT_GT(w1.results().pipelined_us + w2.results().pipelined_us, elapsed);
    EXPECT_LT(w2.results().start_us, w1.results().end_us);  // the second started before the first ended
}

TEST(ApiTest, AsyncOverlapOutputs) {
    Context ctx(two_ranks());
    const AgProblem p1(2, 512, 512, 512, 5), p2(2, 512, 512, 512, 6);
    Tensor a1 = p1.a_on(ctx), b1 = p1.b_on(ctx), a2 = p2.a_on(ctx), b2 = p2.b_on(ctx);
    Tensor c1 = ctx.zeros(512, 512, DataType::F32), c2 = ctx.zeros(512, 512, DataType::F32);
    ctx.ops().run("allgather_gemm", c1, a1, b1, nullptr, true);
    ctx.ops().run("allgather_gemm", c2, a2, b2, nullptr, true);
    ctx.barrier();
    expect_output(c1, p1);
    expect_output(c2, p2);
}

TEST(ApiTest, AsyncWorkspaceCannotBeReusedBeforeBarrier) {
    Context ctx(two_ranks());
    const AgProblem p(2, 256, 256, 256, 0);
    Tensor a = p.a_on(ctx), b = p.b_on(ctx);
    Tensor c = ctx.zeros(p.m, p.n, DataType::F32), d = ctx.zeros(p.m, p.n, DataType::F32);
    const Workspace ws = ctx.ops().run("allgather_gemm", c, a, b, nullptr, true);
    EXPECT_THROW(ctx.ops().run("allgather_gemm", d, a, b, nullptr, true, {}, ws), Error);
    // Allocating and freeing while the async call runs parks the kernels first.
    { Tensor scratch = ctx.zeros(64, 64, DataType::F32); }
    ctx.synchronize();
    expect_output(c, p);
    ctx.ops().run("allgather_gemm", d, a, b, nullptr, false, {}, ws);
    expect_output(d, p);
}

// Async calls left pending when the context goes are completed, not hung.
TEST(ApiTest, ContextWithPendingCallsShutsDown) {
    Context ctx(two_ranks());
    const AgProblem p(2, 256, 256, 256, 0);
    Tensor a = p.a_on(ctx), b = p.b_on(ctx);
    Tensor c = ctx.zeros(p.m, p.n, DataType::F32);
    ctx.ops().run("allgather_gemm", c, a, b, nullptr, true);
}

}  // namespace api_test
