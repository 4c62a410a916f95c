// OpConfig::sanitize: a call checked by the simulator's sanitizer through the API. A clean call
// passes and computes what a plain call computes; a synchronisation bug (examples/custom_kernel's
// fault flag_before_store: the tile's flag raised before its store landed) fails the call with
// tandem::api::Error carrying the count and the first violation, naming its class; the context
// persists across calls, so each check covers its own call only (a violation does not leak into
// the next call), async calls are checked when barrier() completes them, and mixing sanitized and
// plain calls while an async call of the other kind is pending is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "examples/custom_kernel/gemm_all_to_all.hpp"
#include "tandem/tandem.hpp"

namespace api_sanitize_test {

using tandem::api::Context;
using tandem::api::ContextOptions;
using tandem::api::DataType;
using tandem::api::Error;
using tandem::api::OpConfig;
using tandem::api::Tensor;
using tandem::api::Workspace;

ContextOptions on_ranks(int ranks) {
    ContextOptions o;
    o.ranks = ranks;
    return o;
}

OpConfig sanitized(const std::string& fault = "") {
    OpConfig c;
    c.sanitize = true;
    c.fault = fault;
    return c;
}

template <typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// A small integer problem (exact in fp32) for `ranks` ranks of an op whose A is split by rows
// (M/ranks x K per rank) and whose B (K x N) is on every rank.
struct Problem {
    Tensor a, b, c;
};

Problem rows_problem(Context& ctx, int m_per_rank, int k, int n, int out_cols) {
    const int w = ctx.ranks();
    Problem p;
    p.a = ctx.zeros(m_per_rank, k, DataType::F16);
    p.b = ctx.zeros(k, n, DataType::F16);
    p.c = ctx.zeros(m_per_rank * w, out_cols, DataType::F32);
    for (int r = 0; r < w; ++r) {
        std::vector<float> av(static_cast<std::size_t>(m_per_rank) * k), bv(static_cast<std::size_t>(k) * n);
        for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(static_cast<int>((i * 7 + r) % 5) - 2);
        for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(static_cast<int>((i * 3) % 3) - 1);
        p.a.from_host(r, av);
        p.b.from_host(r, bv);
    }
    return p;
}

TEST(ApiSanitize, ACleanCallPassesSanitizedAndComputesWhatAPlainCallDoes) {
    Context ctx(on_ranks(2));
    Problem p = rows_problem(ctx, 128, 256, 256, 256);
    Tensor plain_c = ctx.zeros(256, 256, DataType::F32);
    const Workspace plain = ctx.ops().run("allgather_gemm", plain_c, p.a, p.b);
    Workspace ws = ctx.ops().run("allgather_gemm", p.c, p.a, p.b, nullptr, false, sanitized());
    EXPECT_EQ(ws.results().pipelined_us, plain.results().pipelined_us);  // the sanitizer changes no time
    for (int r = 0; r < 2; ++r) EXPECT_EQ(p.c.to_host(r), plain_c.to_host(r));
    // The workspace reused: the op resets its flags between calls, so no stale flag; a plain call
    // between two sanitized ones is fine.
    ws = ctx.ops().run("allgather_gemm", p.c, p.a, p.b, nullptr, false, sanitized(), ws);
    ws = ctx.ops().run("allgather_gemm", p.c, p.a, p.b, nullptr, false, {}, ws);
    ws = ctx.ops().run("allgather_gemm", p.c, p.a, p.b, nullptr, false, sanitized(), ws);
    EXPECT_EQ(ws.calls(), 4);
}

TEST(ApiSanitize, FlagBeforeStoreInAUserOpFailsTheCallNamingTheClass) {
    Context ctx(on_ranks(2));
    ctx.ops().add(gemm_all_to_all::make_op());
    Problem p = rows_problem(ctx, 128, 200, 512, 256);
    const std::string m = message_of(
        [&] { ctx.ops().run(gemm_all_to_all::kOpName, p.c, p.a, p.b, nullptr, false, sanitized("flag_before_store")); });
    ASSERT_NE(m, "") << "the sanitized call with the bug did not fail";
    EXPECT_NE(m.find(std::string(gemm_all_to_all::kOpName) + ": sanitize found "), std::string::npos) << m;
    EXPECT_NE(m.find("violation"), std::string::npos) << m;
    EXPECT_NE(m.find("[flag before data]"), std::string::npos) << m;
    // Both accesses and the flag, in full: the cube kernel's write and the push kernel's read.
    EXPECT_NE(m.find("GemmFlagKernel"), std::string::npos) << m;
    EXPECT_NE(m.find("PushKernel"), std::string::npos) << m;
    EXPECT_NE(m.find("  write: "), std::string::npos) << m;
    EXPECT_NE(m.find("  read: "), std::string::npos) << m;
    // The context goes on: the same bug in a plain call is not checked, and a clean sanitized
    // call passes (the earlier call's violations were reported with it).
    ctx.ops().run(gemm_all_to_all::kOpName, p.c, p.a, p.b, nullptr, false, [] {
        OpConfig c;
        c.fault = "flag_before_store";
        return c;
    }());
    EXPECT_EQ(message_of([&] { ctx.ops().run(gemm_all_to_all::kOpName, p.c, p.a, p.b, nullptr, false, sanitized()); }), "");
}

TEST(ApiSanitize, AnAsyncCallIsCheckedAtTheBarrier) {
    Context ctx(on_ranks(2));
    ctx.ops().add(gemm_all_to_all::make_op());
    Problem p = rows_problem(ctx, 128, 200, 512, 256);
    ctx.ops().run(gemm_all_to_all::kOpName, p.c, p.a, p.b, nullptr, true, sanitized("flag_before_store"));
    const std::string m = message_of([&] { ctx.barrier(); });
    EXPECT_NE(m.find("barrier: sanitize found "), std::string::npos) << m;
    EXPECT_NE(m.find("[flag before data]"), std::string::npos) << m;
    // A clean async call afterwards passes its barrier.
    ctx.ops().run(gemm_all_to_all::kOpName, p.c, p.a, p.b, nullptr, true, sanitized());
    EXPECT_EQ(message_of([&] { ctx.barrier(); }), "");
}

TEST(ApiSanitize, SanitizedAndPlainCallsDoNotMixWhileOneIsPending) {
    Context ctx(on_ranks(2));
    Problem p = rows_problem(ctx, 128, 256, 256, 256);
    Tensor c2 = ctx.zeros(256, 256, DataType::F32);
    ctx.ops().run("allgather_gemm", p.c, p.a, p.b, nullptr, true);  // plain, pending
    const std::string m = message_of([&] { ctx.ops().run("allgather_gemm", c2, p.a, p.b, nullptr, false, sanitized()); });
    EXPECT_NE(m.find("sanitize=true while 1 async call launched with sanitize=false is pending; call barrier() first"),
              std::string::npos)
        << m;
    ctx.barrier();
    EXPECT_EQ(message_of([&] { ctx.ops().run("allgather_gemm", c2, p.a, p.b, nullptr, false, sanitized()); }), "");
    for (int r = 0; r < 2; ++r) EXPECT_EQ(c2.to_host(r), p.c.to_host(r));
}

}  // namespace api_sanitize_test
