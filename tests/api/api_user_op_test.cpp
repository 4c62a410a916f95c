// A user's op through the API (ctx.ops().add, docs/WRITE_A_KERNEL.md): examples/custom_kernel's
// gemm_all_to_all, which is in no registry. The host resolves it from the call (RunRequest::op_desc),
// so the command line's whole program (inputs, golden, views, verification) runs it as a shipped
// op; through the API it computes the golden, gives the command line's times, reuses its
// workspace, and its faults fail; a name of a shipped op is refused with a clear message.
#include <gtest/gtest.h>

#include <algorithm>

#include <tuple>

#include "examples/custom_kernel/gemm_all_to_all.hpp"
#include "host/run/op_inputs.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/batch/sweep_runner.hpp"
#include "host/params/param_values.hpp"
#include "sim/profile.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "tandem/tandem.hpp"

namespace api_user_op_test {

using tandem::api::Context;
using tandem::api::ContextOptions;
using tandem::api::DataType;
using tandem::api::Error;
using tandem::api::OpConfig;
using tandem::api::Tensor;
using tandem::api::Workspace;
namespace host = tandem::host;

const std::shared_ptr<const tandem::kernels::OpDesc>& user_op() {
    static const std::shared_ptr<const tandem::kernels::OpDesc> op = gemm_all_to_all::make_op();
    return op;
}

const tandem::Profile& b1() {
    static const tandem::Profile p = tandem::load_profile_by_soc("Ascend910B1", tandem::default_profile_dir());
    return p;
}

// The command line's configuration for the user op, resolved: M and N whole tiles per rank, K padded.
host::ResolvedRun config_of(int ranks, const std::string& dtype = "fp16", const std::string& out_dtype = "fp32",
                            const std::string& bias = "none", const std::string& fault = "") {
    host::RunRequest c;
    c.op = gemm_all_to_all::kOpName;
    c.op_desc = user_op().get();
    c.ranks = ranks;
    c.m = ranks * 128;
    c.k = 200;  // not a multiple of base-n: padded
    c.n = ranks * 256;
    c.dtype = host::parse_dtype_text(dtype);
    c.out_dtype = host::parse_dtype_text(out_dtype);
    c.bias = host::parse_bias_text(bias);
    c.fault = fault;
    return host::resolve_run(c, b1());
}

ContextOptions on_ranks(int ranks, bool functional = true) {
    ContextOptions o;
    o.ranks = ranks;
    o.functional = functional;
    return o;
}

bool verified(const host::ProgramOutput& out) {
    if (out.verification.empty()) return false;
    for (const host::RankVerification& v : out.verification)
        if (!v.passed) return false;
    return true;
}

TEST(ApiUserOp, TheHostRunsItFromTheConfigAndItVerifies) {
    // Every dtype, output dtype and bias on 2 ranks; 4 and 8 ranks with and without bias.
    for (const char* dtype : {"fp16", "bf16"}) {
        for (const char* out : {"fp32", dtype}) {
            for (const char* bias : {"none", "m", "n"}) {
                const host::ProgramOutput r = host::run_program(config_of(2, dtype, out, bias), b1());
                EXPECT_TRUE(verified(r)) << dtype << " -> " << out << " bias " << bias << "\n" << r.failure_report;
            }
        }
    }
    for (int ranks : {4, 8}) {
        for (const char* bias : {"none", "n"}) {
            const host::ProgramOutput r = host::run_program(config_of(ranks, "fp16", "fp32", bias), b1());
            EXPECT_TRUE(verified(r)) << ranks << " ranks, bias " << bias << "\n" << r.failure_report;
            // Views: the GEMM alone <= fused <= GEMM then all-to-all.
            const auto& t = r.results.times;
            EXPECT_LE(t.compute_only_us, t.pipelined_us) << ranks;
            EXPECT_LE(t.pipelined_us, t.seq_comm_us + t.seq_compute_us) << ranks;
        }
    }
}

TEST(ApiUserOp, EachFaultFailsVerification) {
    for (const std::string& fault : user_op()->variants.front().faults) {
        if (fault == "flag_before_store") continue;  // a race the timing may hide: the sanitizer's (below)
        const host::ProgramOutput r = host::run_program(config_of(4, "fp16", "fp32", "none", fault), b1());
        EXPECT_FALSE(verified(r)) << fault;
    }
}

TEST(ApiUserOp, TheRegistryDoesNotKnowIt) {
    host::RunRequest c;
    c.op = gemm_all_to_all::kOpName;  // no op_desc: looked up in the registry
    EXPECT_THROW(host::op_of(c), tandem::SimError);
    c.op_desc = user_op().get();
    EXPECT_EQ(&host::op_of(c), user_op().get());
}

// The host's inputs for `cfg` placed in API tensors (B as K x N), the output zeroed.
struct ApiProblem {
    host::OpInputs inputs;
    Tensor a, b, c;
    ApiProblem(Context& ctx, const host::ResolvedRun& run) : inputs(host::make_inputs(run)) {
        const host::RunRequest& cfg = run.request;
        const int w = cfg.ranks;
        a = ctx.zeros(cfg.m / w, cfg.k, DataType::F16);
        b = ctx.zeros(cfg.k, cfg.n, DataType::F16);
        c = ctx.zeros(cfg.m, cfg.n / w, DataType::F32);
        for (int r = 0; r < w; ++r) {
            const auto& ar = inputs.a[static_cast<std::size_t>(r)].bytes;
            a.from_host_bits(r, ar.data(), ar.size());
            const host::HostMatrix& bt = inputs.b_of(r);  // N x K
            const std::uint16_t* bt_bits = bt.halves();
            std::vector<std::uint16_t> bb(static_cast<std::size_t>(bt.rows) * bt.cols);
            for (int nn = 0; nn < cfg.n; ++nn)
                for (int kk = 0; kk < cfg.k; ++kk)
                    bb[static_cast<std::size_t>(kk) * cfg.n + nn] = bt_bits[static_cast<std::size_t>(nn) * cfg.k + kk];
            b.from_host_bits(r, bb.data(), bb.size() * 2);
        }
    }
    // Whether every rank's output equals its share of the golden.
    bool matches(const host::ResolvedRun& run) const {
        const auto& op = *user_op();
        const tandem::kernels::OpParams& p = run.params;
        const std::vector<float> golden = host::golden_output(op.sharding, p, inputs);
        for (int r = 0; r < p.ranks; ++r) {
            if (c.to_host(r) != host::expected_for_rank(op.sharding, p, golden, r)) return false;
        }
        return true;
    }
};

TEST(ApiUserOp, RunsThroughTheApiAsAShippedOp) {
    const host::ResolvedRun cfg = config_of(4);
    Context ctx(on_ranks(4));
    ctx.ops().add(user_op());
    EXPECT_EQ(ctx.ops().names().back(), gemm_all_to_all::kOpName);
    const tandem::api::OpInfo info = ctx.ops().info(gemm_all_to_all::kOpName);
    EXPECT_EQ(std::tie(info.a_split, info.b_split, info.out_split), std::make_tuple("rows", "replicated", "cols"));
    EXPECT_TRUE(info.takes_bias);

    ApiProblem prob(ctx, cfg);
    OpConfig oc;
    oc.all_views = true;
    Workspace ws = ctx.ops().run(gemm_all_to_all::kOpName, prob.c, prob.a, prob.b, nullptr, false, oc);
    EXPECT_TRUE(prob.matches(cfg));
    // The command line's figures for the same simulation.
    host::RunRequest timing = cfg.request;
    timing.timing_only = true;
    const host::ProgramOutput cli = host::run_program(host::resolve_run(timing, b1()), b1());
    EXPECT_DOUBLE_EQ(ws.results().pipelined_us, cli.results.times.pipelined_us);
    EXPECT_DOUBLE_EQ(*ws.results().compute_only_us, cli.results.times.compute_only_us);
    EXPECT_DOUBLE_EQ(*ws.results().seq_comm_us, cli.results.times.seq_comm_us);

    // The workspace again, on other data: flags and counters reset by the call, right answer.
    std::vector<float> twos(static_cast<std::size_t>(cfg.params.m / 4) * cfg.params.k, 2.0f);
    for (int r = 0; r < 4; ++r) prob.a.from_host(r, twos);
    for (auto& ar : prob.inputs.a) std::fill(ar.halves(), ar.halves() + ar.bytes.size() / 2, std::uint16_t{0x4000});  // fp16 2.0
    ws = ctx.ops().run(gemm_all_to_all::kOpName, prob.c, prob.a, prob.b, nullptr, false, {}, ws);
    EXPECT_EQ(ws.calls(), 2);
    EXPECT_TRUE(prob.matches(cfg));

    // A fault through the API: one peer's blocks never arrive.
    OpConfig faulty;
    faulty.fault = "skip_peer";
    ctx.ops().run(gemm_all_to_all::kOpName, prob.c, prob.a, prob.b, nullptr, false, faulty);
    EXPECT_FALSE(prob.matches(cfg));
}

TEST(ApiUserOp, TimingOnlyGivesTheSameTimes) {
    double us[2];
    for (int functional = 0; functional < 2; ++functional) {
        Context ctx(on_ranks(2, functional == 1));
        ctx.ops().add(user_op());
        Tensor a = ctx.zeros(128, 200, DataType::F16), b = ctx.zeros(200, 512, DataType::F16);
        Tensor c = ctx.zeros(256, 256, DataType::F32);
        us[functional] = ctx.ops().run(gemm_all_to_all::kOpName, c, a, b).results().pipelined_us;
    }
    EXPECT_GT(us[0], 0.0);
    EXPECT_EQ(us[0], us[1]);
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ApiUserOp, NameClashesAndIncompleteDescriptionsAreClearErrors) {
    Context ctx(on_ranks(2));
    auto clash = std::make_shared<tandem::kernels::OpDesc>(*user_op());
    clash->name = "allgather_gemm";
    EXPECT_NE(message_of([&] { ctx.ops().add(clash); }).find("'allgather_gemm' is the name of a shipped op"), std::string::npos);
    ctx.ops().add(user_op());
    EXPECT_NE(message_of([&] { ctx.ops().add(user_op()); }).find("already added"), std::string::npos);
    auto no_make = std::make_shared<tandem::kernels::OpDesc>(*user_op());
    no_make->name = "incomplete";
    no_make->variants.front().make = nullptr;
    EXPECT_NE(message_of([&] { ctx.ops().add(no_make); }).find("variant 'producer_consumer' has no make"), std::string::npos);
    EXPECT_NE(message_of([&] { ctx.ops().add(nullptr); }).find("empty op description"), std::string::npos);
    // The table is the context's: another context does not know the op.
    Context other(on_ranks(2));
    Tensor a = other.zeros(128, 200, DataType::F16), b = other.zeros(200, 512, DataType::F16);
    Tensor c = other.zeros(256, 256, DataType::F32);
    EXPECT_NE(message_of([&] { other.ops().run(gemm_all_to_all::kOpName, c, a, b); }).find("no such op"), std::string::npos);
    // A shape the op refuses: the command line's one-line message, in the C++ API's words (N read
    // off the tensors, not a flag).
    Tensor c_bad = ctx.zeros(256, 255, DataType::F32);
    Tensor b_bad = ctx.zeros(200, 510, DataType::F16), a2 = ctx.zeros(128, 200, DataType::F16);
    const std::string refused = message_of([&] { ctx.ops().run(gemm_all_to_all::kOpName, c_bad, a2, b_bad); });
    EXPECT_NE(refused.find("N = 510: N must be a multiple of n*base-n"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("--gn"), std::string::npos) << refused;
}

}  // namespace api_user_op_test

namespace api_user_op_test {
// The cluster size the timing model is meant for: a timing-only call at 64 ranks completes.
TEST(ApiUserOp, SixtyFourRanksTimingOnly) {
    Context ctx(on_ranks(64, false));
    ctx.ops().add(user_op());
    Tensor a = ctx.zeros(128, 256, DataType::F16), b = ctx.zeros(256, 64 * 256, DataType::F16);
    Tensor c = ctx.zeros(64 * 128, 256, DataType::F32);
    EXPECT_GT(ctx.ops().run(gemm_all_to_all::kOpName, c, a, b).results().pipelined_us, 0.0);
}
}  // namespace api_user_op_test

namespace api_user_op_test {
// The simulator's synchronisation checker (--sanitize) finds no unordered access in the user
// op's kernels (the flags really order every read after its write), and changes no time.
TEST(ApiUserOp, RunsCleanUnderTheSyncSanitizer) {
    for (int ranks : {2, 4}) {
        host::ResolvedRun c = config_of(ranks, "fp16", "fp32", "n");
        c.request.sanitize = true;
        const host::ProgramOutput out = host::run_program(c, b1());
        EXPECT_EQ(out.bench.sanitizer_total, 0u)
            << tandem::format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
        EXPECT_TRUE(verified(out));
        c.request.sanitize = false;
        EXPECT_EQ(host::run_program(c, b1()).results.times.pipelined_us, out.results.times.pipelined_us);
    }
}
}  // namespace api_user_op_test

namespace api_user_op_test {
// The flag raised before the tile's store has landed is a synchronisation bug whatever bytes this
// run's timing delivered: --sanitize names it (the push kernel's read of the tile is not ordered
// after the cube's write), in a single run and in a sweep's row.
TEST(ApiUserOp, FlagBeforeStoreIsCaughtByTheSanitizer) {
    host::ResolvedRun c = config_of(2, "fp16", "fp32", "none", "flag_before_store");
    c.request.sanitize = true;
    const host::ProgramOutput out = host::run_program(c, b1());
    ASSERT_GT(out.bench.sanitizer_total, 0u);
    const std::string report = tandem::format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
    EXPECT_NE(report.find("GemmFlagKernel"), std::string::npos) << report;
    EXPECT_NE(report.find("PushKernel"), std::string::npos) << report;
}

TEST(SweepSanitize, ARowThatBreaksARuleFailsWithTheFirstViolation) {
    auto profile = std::make_shared<const tandem::Profile>(b1());
    std::vector<host::SweepJob> jobs;
    for (const std::string fault : {"", "flag_before_store"}) {
        host::SweepJob j;
        j.line = static_cast<int>(jobs.size()) + 2;
        j.origin = "test row " + std::to_string(j.line);
        j.run = config_of(2, "fp16", "fp32", "none", fault);
        j.run.request.sanitize = true;
        j.profile = profile;
        jobs.push_back(j);
    }
    host::SweepOptions opt;
    opt.jobs = 1;
    opt.out_prefix.clear();  // no files: the entries are what is checked
    host::SweepRunner runner(opt);
    runner.run(jobs);
    const std::vector<host::SweepEntry> e = runner.entries();
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].status, host::SweepStatus::Ok) << e[0].error;
    EXPECT_EQ(e[1].status, host::SweepStatus::Failed);
    EXPECT_NE(e[1].error.find("--sanitize found"), std::string::npos) << e[1].error;
    EXPECT_EQ(e[1].error.find('\n'), std::string::npos) << e[1].error;  // one line in the row
    EXPECT_EQ(runner.failed(), 1);
}
}  // namespace api_user_op_test
