// A traced call of the API (OpConfig::trace): the same events as the command line's --trace of
// the same run, the rank filter, byte-identical files, async calls' traces (open until the
// barrier), and the refusals in the API's words.
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
    tandem::host::write_trace(outputs, profile, cli_out);
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

// An async call's trace, written by the barrier() that completes it, holds what a synchronous
// call's trace of the same call holds when nothing else runs.
TEST(ApiTrace, AnAsyncCallAloneTracesWhatTheSynchronousCallTraces) {
    const TempDir dir;
    OpConfig sync_cfg;
    sync_cfg.trace = dir.file("sync.json");
    OpConfig async_cfg;
    async_cfg.trace = dir.file("async.json");
    Call sync_call;
    const tandem::api::OpResults sync_res = sync_call.run(sync_cfg);
    Call async_call;
    const tandem::api::Workspace ws =
        async_call.ctx.ops().run("allgather_gemm", async_call.c, async_call.a, async_call.b, nullptr, true, async_cfg);
    EXPECT_FALSE(fs::exists(async_cfg.trace));  // written by the barrier
    async_call.ctx.barrier();
    const nlohmann::json s = nlohmann::json::parse(read_file(sync_cfg.trace));
    const nlohmann::json a = nlohmann::json::parse(read_file(async_cfg.trace));
    EXPECT_GT(events_of(s).size(), 100u);
    EXPECT_EQ(events_of(a), events_of(s));
    EXPECT_EQ(a["otherData"]["busy_us"], s["otherData"]["busy_us"]);
    // The same time as an untraced async call (a synchronous call's adds the host's synchronize).
    Call untraced;
    const tandem::api::Workspace plain =
        untraced.ctx.ops().run("allgather_gemm", untraced.c, untraced.a, untraced.b, nullptr, true, {});
    untraced.ctx.barrier();
    EXPECT_NEAR(ws.results().pipelined_us, plain.results().pipelined_us, 1e-9);
    EXPECT_GT(sync_res.pipelined_us, ws.results().pipelined_us);
    ASSERT_EQ(a["otherData"]["calls"].size(), 1u);
    EXPECT_EQ(a["otherData"]["calls"][0]["op"], "allgather_gemm");
    EXPECT_FALSE(s["otherData"].contains("calls"));  // a synchronous call's trace is its call's alone
}

// Two async calls overlap: the first one's trace holds the second's kernels too, lists both
// calls, and changes neither call's time.
TEST(ApiTrace, AnAsyncCallsTraceHoldsTheCallsItOverlapped) {
    const TempDir dir;
    auto two_calls = [](Call& call, const OpConfig& first) {
        Tensor c2 = call.ctx.zeros(512, 512, DataType::F32);
        const tandem::api::Workspace w1 = call.ctx.ops().run("allgather_gemm", call.c, call.a, call.b, nullptr, true, first);
        const tandem::api::Workspace w2 = call.ctx.ops().run("allgather_gemm", c2, call.a, call.b, nullptr, true, {});
        call.ctx.barrier();
        return std::pair(w1.results(), w2.results());
    };
    Call plain;
    const auto untraced = two_calls(plain, {});
    Call traced;
    OpConfig cfg;
    cfg.trace = dir.file("both.json");
    const auto times = two_calls(traced, cfg);
    EXPECT_NEAR(times.first.pipelined_us, untraced.first.pipelined_us, 1e-9);
    EXPECT_NEAR(times.second.pipelined_us, untraced.second.pipelined_us, 1e-9);
    // The second started after the first (its launch follows the first's on every rank).
    EXPECT_GE(times.second.start_us, times.first.start_us);

    const nlohmann::json t = nlohmann::json::parse(read_file(cfg.trace));
    const nlohmann::json& calls = t["otherData"]["calls"];
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_NEAR(calls[1]["pipelined_us"].get<double>(), times.second.pipelined_us, 1e-9);
    // The trace spans both calls, and holds twice one call's instructions.
    const double span = t["otherData"]["view_end_us"].get<double>() - t["otherData"]["view_start_us"].get<double>();
    EXPECT_NEAR(span, std::max(times.first.end_us, times.second.end_us) - times.first.start_us, 1e-6);
    Call one;
    OpConfig one_cfg;
    one_cfg.trace = dir.file("one.json");
    one.run(one_cfg);
    EXPECT_EQ(events_of(t).size(), 2 * events_of(nlohmann::json::parse(read_file(one_cfg.trace))).size());
    // The second call's streams are named after it, so its blocks stay apart from the first's.
    std::set<std::string> names;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "X" && e["args"].contains("stream")) names.insert(e["args"]["stream"].get<std::string>());
    }
    EXPECT_TRUE(names.count("comm") == 1 && names.count("allgather_gemm[2] comm") == 1) << nlohmann::json(names).dump();
}

// An async call of `call` traced to `file`, its trace open until the barrier; returns the file.
std::string start_traced_async_call(Call& call, const std::string& file) {
    OpConfig cfg;
    cfg.trace = file;
    call.ctx.ops().run("allgather_gemm", call.c, call.a, call.b, nullptr, true, cfg);
    return file;
}

// Synchronous calls made while an async call's trace is open run in it, in turn on one set of
// streams: one lane, named after both, listed in the calls with their lane.
TEST(ApiTrace, SynchronousCallsInsideAnOpenTraceShareALane) {
    const TempDir dir;
    Call call;
    const std::string file = start_traced_async_call(call, dir.file("open.json"));
    Tensor c2 = call.ctx.zeros(512, 512, DataType::F32);
    const double second = call.ctx.ops().run("allgather_gemm", c2, call.a, call.b).results().pipelined_us;
    call.ctx.ops().run("allgather_gemm", c2, call.a, call.b);
    call.ctx.barrier();
    const nlohmann::json t = nlohmann::json::parse(read_file(file));
    const nlohmann::json& calls = t["otherData"]["calls"];
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0]["lane"], 1);
    EXPECT_EQ(calls[1]["lane"], 2);
    EXPECT_EQ(calls[2]["lane"], 2);
    EXPECT_NEAR(calls[1]["pipelined_us"].get<double>(), second, 1e-9);  // its own, not the later call's
    std::set<std::string> streams, tracks;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "X" && e["args"].contains("stream")) streams.insert(e["args"]["stream"].get<std::string>());
        if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    }
    EXPECT_TRUE(streams.count("comm") == 1 && streams.count("allgather_gemm[2]/allgather_gemm[3] comm") == 1)
        << nlohmann::json(streams).dump();
    EXPECT_TRUE(tracks.count("AIC0 CUBE") == 1 && tracks.count("AIC0 CUBE (lane 2)") == 1 && tracks.count("AIC0 CUBE (lane 3)") == 0);
}

TEST(ApiTrace, OneTraceIsOpenAtATime) {
    const TempDir dir;
    Call call;
    const std::string first = start_traced_async_call(call, dir.file("first.json"));
    Tensor c2 = call.ctx.zeros(512, 512, DataType::F32);
    OpConfig second;
    second.trace = dir.file("second.json");
    std::string why;
    try {
        call.ctx.ops().run("allgather_gemm", c2, call.a, call.b, nullptr, true, second);
    } catch (const Error& e) {
        why = e.what();
    }
    EXPECT_NE(why.find("allgather_gemm: OpConfig::trace = '" + second.trace +
                       "': the trace of an async allgather_gemm call is open until barrier()"),
              std::string::npos)
        << why;
    call.ctx.barrier();
    EXPECT_TRUE(fs::exists(first));
    EXPECT_FALSE(fs::exists(second.trace));
    // After the barrier a call traces again; with an async call pending, it may not start one.
    call.ctx.ops().run("allgather_gemm", c2, call.a, call.b, nullptr, true, {});
    why.clear();
    try {
        call.ctx.ops().run("allgather_gemm", call.c, call.a, call.b, nullptr, false, second);
    } catch (const Error& e) {
        why = e.what();
    }
    EXPECT_NE(why.find("async calls are pending and would run inside the trace"), std::string::npos) << why;
    call.ctx.barrier();
    EXPECT_GT(call.run(second).pipelined_us, 0);
    EXPECT_TRUE(fs::exists(second.trace));
}

}  // namespace api_trace_test
