// A traced call of the API (OpConfig::trace): the same events as the command line's --trace of
// the same run, the rank filter, byte-identical files, and the refusals in the API's words.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "sim/profile.hpp"
#include "tandem/tandem.hpp"

namespace api_trace_test {

namespace fs = std::filesystem;
using tandem::api::Context;
using tandem::api::ContextOptions;
using tandem::api::DataType;
using tandem::api::Error;
using tandem::api::OpConfig;
using tandem::api::Tensor;

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("tandem_api_trace_test_" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// allgather_gemm, 2 ranks, M = K = N = 512, timing-only (the data does not change the times).
struct Call {
    Context ctx{[] {
        ContextOptions o;
        o.ranks = 2;
        o.functional = false;
        return o;
    }()};
    Tensor a = ctx.zeros(256, 512, DataType::F16);
    Tensor b = ctx.zeros(512, 512, DataType::F16);
    Tensor c = ctx.zeros(512, 512, DataType::F32);
    tandem::api::OpResults run(const OpConfig& cfg, bool async_op = false) {
        return ctx.ops().run("allgather_gemm", c, a, b, nullptr, async_op, cfg).results();
    }
};

// A trace's instruction events (name, rank, track, start from the view's start, duration), in
// whole nanoseconds: what two traces of one simulation must share whatever their clocks' origin.
using Event = std::tuple<std::string, int, int, long long, long long>;
std::multiset<Event> events_of(const nlohmann::json& t) {
    const double start_us = t["otherData"]["view_start_us"].get<double>();
    std::multiset<Event> out;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] != "X") continue;
        out.emplace(e["name"].get<std::string>(), e["pid"].get<int>(), e["tid"].get<int>(),
                    std::llround((e["ts"].get<double>() - start_us) * 1e3), std::llround(e["dur"].get<double>() * 1e3));
    }
    return out;
}

// With all_views the call runs the command line's three views in its order: its trace holds the
// command line's events, and the same busy times and view length.
TEST(ApiTrace, ACallWithAllViewsTracesWhatTheCommandLineTraces) {
    const TempDir dir;
    Call call;
    OpConfig cfg;
    cfg.all_views = true;
    cfg.trace = dir.file("api.json");
    const tandem::api::OpResults res = call.run(cfg);
    const nlohmann::json api = nlohmann::json::parse(read_file(cfg.trace));

    tandem::host::RunRequest rc;
    rc.op = "allgather_gemm";
    rc.ranks = 2;
    rc.m = rc.k = rc.n = 512;
    rc.timing_only = true;
    const tandem::Profile profile = tandem::load_profile_by_soc(rc.soc, tandem::default_profile_dir());
    tandem::host::RunOutputs outputs;
    outputs.trace_file = dir.file("cli.json");
    const tandem::host::ProgramOutput cli_out = tandem::host::run_program(tandem::host::resolve_run(rc, profile), profile, outputs);
    const nlohmann::json cli = nlohmann::json::parse(read_file(outputs.trace_file));

    const std::multiset<Event> from_api = events_of(api);
    ASSERT_GT(from_api.size(), 100u);
    EXPECT_TRUE(from_api == events_of(cli)) << from_api.size() << " events against " << events_of(cli).size();
    const auto& am = api["otherData"];
    const auto& cm = cli["otherData"];
    EXPECT_EQ(am["busy_us"], cm["busy_us"]);
    EXPECT_NEAR(am["view_end_us"].get<double>() - am["view_start_us"].get<double>(), res.pipelined_us, 1e-6);
    EXPECT_DOUBLE_EQ(am["pipelined_us"].get<double>(), cli_out.results.times.pipelined_us);
    EXPECT_DOUBLE_EQ(am["compute_only_us"].get<double>(), cm["compute_only_us"].get<double>());
    EXPECT_EQ(am["op"], "allgather_gemm");
    EXPECT_EQ(am["source"], "api call");
}

// Without all_views the trace carries only what the call measured, and only the kept ranks.
TEST(ApiTrace, KeepsTheRanksAskedForAndOnlyWhatTheCallMeasured) {
    const TempDir dir;
    Call call;
    OpConfig cfg;
    cfg.trace = dir.file("rank1.json");
    cfg.trace_ranks = {1};
    call.run(cfg);
    const nlohmann::json t = nlohmann::json::parse(read_file(cfg.trace));
    std::set<int> ranks;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "X") ranks.insert(e["pid"].get<int>());
    EXPECT_EQ(ranks, std::set<int>{1});
    EXPECT_EQ(t["otherData"]["filter"]["ranks"], nlohmann::json::array({1}));
    EXPECT_TRUE(t["otherData"].contains("pipelined_us"));
    EXPECT_FALSE(t["otherData"].contains("compute_only_us"));
    EXPECT_FALSE(t["otherData"].contains("overlap_eff_pct"));
    for (const auto& e : fs::directory_iterator(dir.path))
        EXPECT_EQ(e.path().filename().string(), "rank1.json") << "left behind: " << e.path();
}

TEST(ApiTrace, IsByteIdenticalAcrossContexts) {
    const TempDir dir;
    std::string bytes[2];
    for (int i = 0; i < 2; ++i) {
        Call call;
        OpConfig cfg;
        cfg.trace = dir.file("t" + std::to_string(i) + ".json");
        call.run(cfg);
        bytes[i] = read_file(cfg.trace);
    }
    EXPECT_GT(bytes[0].size(), 1000u);
    EXPECT_EQ(bytes[0], bytes[1]);
}

// A traced call between plain ones changes none of their times, and a later traced call of the
// same workspace traces only itself.
TEST(ApiTrace, TracingChangesNoTimeAndTracesOnlyItsCall) {
    const TempDir dir;
    Call plain, traced;
    const double first = plain.run({}).pipelined_us;
    OpConfig cfg;
    cfg.trace = dir.file("t.json");
    EXPECT_DOUBLE_EQ(traced.run(cfg).pipelined_us, first);
    EXPECT_DOUBLE_EQ(plain.run({}).pipelined_us, traced.run({}).pipelined_us);
    const tandem::api::OpResults again = traced.run(cfg);
    const nlohmann::json t = nlohmann::json::parse(read_file(cfg.trace));
    const double start = t["otherData"]["view_start_us"].get<double>();
    EXPECT_NEAR(start, again.start_us, 1e-6);
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "X") {
            ASSERT_GE(e["ts"].get<double>(), start - 1e-6) << e.dump();
        }
    }
}

std::string refusal(Call& call, const OpConfig& cfg, bool async_op = false) {
    try {
        call.run(cfg, async_op);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ApiTrace, RefusalsNameTheFieldAndTheValue) {
    const TempDir dir;
    Call call;
    OpConfig cfg;
    cfg.trace = dir.file("t.json");
    EXPECT_NE(refusal(call, cfg, true).find("allgather_gemm: OpConfig::trace = '" + cfg.trace + "' traces a synchronous call"),
              std::string::npos)
        << refusal(call, cfg, true);
    cfg.trace_ranks = {0, 2};
    EXPECT_NE(refusal(call, cfg).find("OpConfig::trace_ranks names rank 2; the context has 2 ranks (0..1)"), std::string::npos)
        << refusal(call, cfg);
    cfg.trace_ranks = {};
    cfg.trace_window_us = std::pair(5.0, 1.0);
    EXPECT_NE(refusal(call, cfg).find("OpConfig::trace_window_us = 5:1"), std::string::npos) << refusal(call, cfg);
    OpConfig no_file;
    no_file.trace_ranks = {0};
    EXPECT_NE(refusal(call, no_file).find("give OpConfig::trace"), std::string::npos) << refusal(call, no_file);
    // A file that cannot be written: the call's error names it, no file is left, and the context
    // goes on.
    OpConfig bad;
    bad.trace = dir.file("no/such/dir/t.json");
    const std::string why = refusal(call, bad);
    EXPECT_NE(why.find("allgather_gemm: cannot write trace '" + bad.trace + "'"), std::string::npos) << why;
    EXPECT_FALSE(fs::exists(dir.path / "no"));
    EXPECT_GT(call.run({}).pipelined_us, 0);
    // Nothing was written by the refused calls.
    EXPECT_TRUE(fs::is_empty(dir.path));
}

}  // namespace api_trace_test
