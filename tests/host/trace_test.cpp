// The Chrome trace of the pipelined view: valid JSON with the fields Perfetto needs, tracks that
// never overlap, busy time that adds up to the simulator's own counters, one flow into every
// TWAIT that stalled, filters that keep what they say, and byte-identical output.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/run/program.hpp"
#include "host/ops/op_facade.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace trace_test {

namespace fs = std::filesystem;

struct TraceRun {
    nlohmann::json trace;
    std::string bytes;
    ProgramOutput out;
};

// `full_log`: keep every rank's instructions in the run's event log (RunOutputs::record_log), not
// only the kept ranks' as a trace alone does.
TraceRun traced_run_of(RunRequest cfg, const std::vector<int>& keep_ranks = {},
                       std::optional<std::pair<double, double>> window = std::nullopt, const std::string& name = "t",
                       bool full_log = false) {
    const fs::path dir = fs::temp_directory_path() / ("tandem_trace_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    cfg.timing_only = true;
    RunOutputs outputs;
    outputs.trace_file = (dir / (name + ".json")).string();
    outputs.trace_ranks = keep_ranks;
    outputs.trace_window_us = window;
    outputs.record_log = full_log;
    const Profile p = test::b1_profile();
    TraceRun run;
    run.out = run_program(resolve_run(cfg, p), p, outputs);
    write_trace(outputs, p, run.out);
    std::ifstream f(outputs.trace_file);
    std::stringstream ss;
    ss << f.rdbuf();
    run.bytes = ss.str();
    run.trace = nlohmann::json::parse(run.bytes);
    for (const auto& e : fs::directory_iterator(dir))
        EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temp file left: " << e.path();
    fs::remove_all(dir);
    return run;
}

TraceRun traced_run(int ranks, const std::vector<int>& keep_ranks = {},
                    std::optional<std::pair<double, double>> window = std::nullopt, const std::string& name = "t") {
    RunRequest cfg;
    cfg.ranks = ranks;
    cfg.m = 512 * ranks;
    cfg.k = 1024;
    cfg.n = 512;
    return traced_run_of(cfg, keep_ranks, window, name);
}

bool is_link_counter(const nlohmann::json& e) {
    const std::string name = e["name"];
    return e["ph"] == "C" && name.size() > 5 && name.ends_with(" GB/s");
}

std::map<std::pair<int, int>, std::string> track_names(const nlohmann::json& t) {
    std::map<std::pair<int, int>, std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name") names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    return names;
}

double us(const nlohmann::json& v) { return v.get<double>(); }

TEST(Trace, CompleteEventsHaveThePerfettoFieldsAndTracksDoNotOverlap) {
    const TraceRun run = traced_run(2);
    const auto& t = run.trace;
    ASSERT_TRUE(t.contains("traceEvents"));
    ASSERT_TRUE(t.contains("otherData"));
    for (const char* key : {"soc", "ranks", "m", "k", "n", "base_m", "base_n", "compute_blocks", "comm_blocks", "comm_mode",
                            "data_mode", "view", "busy_us", "filter"})
        EXPECT_TRUE(t["otherData"].contains(key)) << key;
    const auto names = track_names(t);
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
    int complete = 0;
    for (const auto& e : t["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph"));
        if (e["ph"] != "X") continue;
        ++complete;
        for (const char* key : {"name", "cat", "ts", "dur", "pid", "tid", "args"}) ASSERT_TRUE(e.contains(key)) << e.dump();
        EXPECT_GE(us(e["dur"]), 0.0);
        const std::pair<int, int> track{e["pid"].get<int>(), e["tid"].get<int>()};
        ASSERT_TRUE(names.count(track)) << "track without a name: " << e.dump();
        spans[track].push_back({us(e["ts"]), us(e["ts"]) + us(e["dur"])});
    }
    EXPECT_GT(complete, 1000);
    for (auto& [track, list] : spans) {
        std::sort(list.begin(), list.end());
        for (std::size_t i = 1; i < list.size(); ++i)
            EXPECT_LE(list[i - 1].second, list[i].first + 1e-9) << names.at(track) << " overlaps at " << list[i].first;
    }
}

TEST(Trace, PipeBusyTimeAddsUpToTheSimulatorsCounters) {
    const TraceRun run = traced_run(2);
    const auto names = track_names(run.trace);
    std::map<std::pair<int, std::string>, double> busy;
    for (const auto& e : run.trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const std::string& track = names.at({e["pid"].get<int>(), e["tid"].get<int>()});
        busy[{e["pid"].get<int>(), track.substr(track.find(' ') + 1)}] += us(e["dur"]);
    }
    // The simulator's counters, straight from the kernels' statistics (not from the trace).
    for (const auto& [rank, pipes] : run.out.bench.pipelined_busy_ps) {
        for (Pipe p : {Pipe::M, Pipe::MTE1, Pipe::MTE2, Pipe::MTE3, Pipe::FIX}) {
            const double counter = to_us(pipes[static_cast<std::size_t>(pipe_index(p))]);
            EXPECT_GT(counter, 0.0) << pipe_name(p);
            const double traced = busy[std::make_pair(rank, std::string(pipe_name(p)))];
            EXPECT_NEAR(traced, counter, 1e-5) << "rank " << rank << " " << pipe_name(p);
        }
    }
}

TEST(Trace, EveryStalledTwaitHasOneIncomingFlowFromANotify) {
    const TraceRun run = traced_run(4);
    std::map<int, nlohmann::json> starts;
    std::vector<nlohmann::json> finishes;
    for (const auto& e : run.trace["traceEvents"]) {
        if (e["ph"] == "s") starts[e["id"].get<int>()] = e;
        if (e["ph"] == "f") finishes.push_back(e);
    }
    int stalls = 0;
    for (const auto& e : run.trace["traceEvents"]) {
        if (e["ph"] != "X" || e["cat"].get<std::string>().find("stall") == std::string::npos) continue;
        ++stalls;
        EXPECT_EQ(e["name"], "TWAIT");
        const double begin = us(e["ts"]), end = begin + us(e["dur"]);
        int incoming = 0;
        for (const auto& f : finishes) {
            if (f["pid"] != e["pid"] || f["tid"] != e["tid"] || us(f["ts"]) < begin || us(f["ts"]) > end) continue;
            ++incoming;
            ASSERT_TRUE(starts.count(f["id"].get<int>()));
            EXPECT_LE(us(starts[f["id"].get<int>()]["ts"]), us(f["ts"]));  // the notify comes first
        }
        EXPECT_EQ(incoming, 1) << e.dump();
    }
    EXPECT_GT(stalls, 0);
    EXPECT_EQ(starts.size(), finishes.size());
}

TEST(Trace, StallsAreAttributedToNamedSignals) {
    const TraceRun run = traced_run(2);
    int named = 0;
    for (const auto& e : run.trace["traceEvents"]) {
        if (e["ph"] == "X" && e["name"] == "TWAIT") {
            ASSERT_TRUE(e["args"].contains("signal")) << e.dump();
            EXPECT_EQ(e["args"]["signal"].get<std::string>().rfind("summary[src=", 0), 0u);
            ++named;
        }
    }
    EXPECT_GT(named, 0);
}

TEST(Trace, LinkCountersNeverExceedTheLinkBandwidth) {
    const TraceRun run = traced_run(2);
    const double link_gb_s = test::b1_profile().interconnect.link_gb_s;
    int samples = 0;
    double peak = 0;
    for (const auto& e : run.trace["traceEvents"]) {
        if (!is_link_counter(e)) continue;
        ++samples;
        peak = std::max(peak, e["args"]["GB/s"].get<double>());
        EXPECT_GE(e["args"]["GB/s"].get<double>(), 0.0);
    }
    EXPECT_GT(samples, 0);
    EXPECT_LE(peak, link_gb_s * 1.001);
    EXPECT_GT(peak, link_gb_s * 0.5);  // the comm kernel does load the link
}

// The memory counter's area is every byte the kernels moved through the chip's L2. The
// single-chip GEMM of 1536^3 (pto_performance): 24 cores x 3 tiles, each reading its 128-row A
// strip and 256-column B strip over the whole K (fp16), and 1536^2 fp32 of C stored once.
TEST(Trace, MemoryCounterAddsUpToTheBytesThroughTheL2) {
    RunRequest cfg;
    cfg.op = "gemm";
    cfg.variant = "pto_performance";
    cfg.ranks = 1;
    cfg.m = cfg.k = cfg.n = 1536;
    const TraceRun run = traced_run_of(cfg);
    const double bin_s = 500e-9;
    double l2_bytes = 0;
    double hbm_bytes = 0;
    int samples = 0;
    for (const auto& e : run.trace["traceEvents"]) {
        if (e["name"] != "memory GiB/s") continue;
        ++samples;
        EXPECT_EQ(e["ph"], "C");
        EXPECT_EQ(e["pid"], 0);
        l2_bytes += e["args"]["L2"].get<double>() * 1073741824.0 * bin_s;
        hbm_bytes += e["args"]["HBM"].get<double>() * 1073741824.0 * bin_s;
    }
    EXPECT_GT(samples, 10);
    const double loads = 24.0 * 3 * (128 + 256) * 1536 * 2;
    const double stores = 1536.0 * 1536 * 4;
    EXPECT_NEAR(l2_bytes, loads + stores, (loads + stores) * 1e-6);
    EXPECT_GT(hbm_bytes, 0.0);  // A and B come from HBM the first time
    EXPECT_LT(hbm_bytes, l2_bytes);
}

TEST(Trace, RankAndWindowFiltersKeepOnlyWhatTheySay) {
    const TraceRun full = traced_run(4);
    const TraceRun one = traced_run(4, {2});
    for (const auto& e : one.trace["traceEvents"]) {
        if (e.contains("pid") && e["ph"] != "M") {
            EXPECT_EQ(e["pid"], 2) << e.dump();
        }
    }
    int memory_samples = 0;
    for (const auto& e : full.trace["traceEvents"]) memory_samples += e["name"] == "memory GiB/s" && e["pid"] == 2;
    EXPECT_GT(memory_samples, 0);  // rank 2's memory counter is there to be kept
    const double start = full.trace["otherData"]["view_start_us"].get<double>();
    const TraceRun windowed = traced_run(4, {}, std::pair<double, double>{10.0, 20.0});
    int kept = 0;
    for (const auto& e : windowed.trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        ++kept;
        EXPECT_GE(us(e["ts"]) + us(e["dur"]), start + 10.0 - 1e-6);
        EXPECT_LE(us(e["ts"]), start + 20.0 + 1e-6);
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(windowed.bytes.size(), full.bytes.size());
}

// A trace of some ranks keeps only their instructions while the run simulates (an eighth of the
// records for one rank of eight), yet writes what the whole log filtered gives: the kept rank's
// memory counter holds the stores its peers' streams made into it, and its flows the notifies
// that released its waits.
TEST(Trace, ARankFilterLogsOnlyThatRankYetWritesWhatTheWholeLogGives) {
    RunRequest cfg;
    cfg.ranks = 4;
    cfg.m = 512 * 4;
    cfg.k = 1024;
    cfg.n = 512;
    const TraceRun filtered = traced_run_of(cfg, {2}, std::nullopt, "filtered");
    const TraceRun whole = traced_run_of(cfg, {2}, std::nullopt, "whole", /*full_log=*/true);
    EXPECT_EQ(filtered.bytes, whole.bytes);
    ASSERT_FALSE(filtered.out.bench.pipelined_log.empty());
    for (const InstrRecord& r : filtered.out.bench.pipelined_log) ASSERT_EQ(r.rank, 2) << format_record(r);
    std::set<int> logged;
    for (const InstrRecord& r : whole.out.bench.pipelined_log) logged.insert(r.rank);
    EXPECT_EQ(logged, (std::set<int>{0, 1, 2, 3}));
    int peer_stores = 0;  // what makes the memory counter's equality mean something
    for (const InstrRecord& r : whole.out.bench.pipelined_log) peer_stores += r.peer == 2 && r.rank != 2 && r.bytes > 0;
    EXPECT_GT(peer_stores, 0);
}

TEST(Trace, IsByteIdenticalAcrossRuns) {
    EXPECT_EQ(traced_run(4, {}, std::nullopt, "a").bytes, traced_run(4, {}, std::nullopt, "b").bytes);
}

}  // namespace trace_test
}  // namespace tandem::host
