// Stream-K and hybrid schedules of the GEMM part, fused with matmul_all_reduce's atomic and
// one_shot variants and matmul_all_scatter's fused_sequential and specialized: results equal the golden on tile counts that do not divide over the 24
// cube blocks (25, 31, 47 tiles), with K loops split over two and three blocks; a fix-up that
// leaves out a partial fails verification; functional and timing-only give the same times; the
// trace shows each fix-up wait as a TWAIT slice on a fix-up counter with a flow from a partial's
// counter add; data_parallel refuses nothing and a variant without the schedule refuses it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "host/ops/op_facade.hpp"
#include "host/params/param_words.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace stream_k_test {

// Base tiles 64 x 128 keep the functional runs small; K panels are 128 deep.
RunRequest config(const std::string& variant, const std::string& schedule, int ranks, int m_tiles, int n_tiles,
                  int k_panels) {
    RunRequest cfg;
    cfg.op = "matmul_all_reduce";
    cfg.variant = variant;
    cfg.schedule = schedule;
    cfg.ranks = ranks;
    cfg.base_m = 64;
    cfg.base_n = 128;
    cfg.m = 64 * m_tiles;
    cfg.n = 128 * n_tiles;
    cfg.k = 128 * k_panels;
    return cfg;
}

ProgramOutput run(RunRequest cfg, const std::string& fault = "") {
    cfg.fault = fault;
    return test::run_op(cfg);
}

void expect_verifies(RunRequest cfg) {
    SCOPED_TRACE(cfg.variant + " " + cfg.schedule + " " + std::to_string(cfg.m) + "x" + std::to_string(cfg.k) + "x" +
                 std::to_string(cfg.n) + " " + dtype_name(cfg.dtype) + "->" + dtype_name(cfg.out_dtype.value_or(DType::F32)) +
                 " bias " + kernels::bias_name(cfg.bias));
    const ProgramOutput out = run(cfg);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    EXPECT_LE(out.results.times.compute_only_us, out.results.times.pipelined_us);
}

// 25 tiles (5 x 5) of 4 panels: stream-K splits tiles over two blocks; hybrid puts the last tile's
// 4 panels on 4 blocks.
TEST(StreamK, TwentyFiveTilesVerifyOnBothVariants) {
    for (const std::string v : {"atomic", "one_shot"})
        for (const std::string s : {"stream_k", "hybrid"}) expect_verifies(config(v, s, 2, 5, 5, 4));
}

// 50 tiles of 4 panels (two fix-ups on some blocks' AIVs): once a hazard in the fix-up.
TEST(StreamK, FiftyTilesVerify) {
    for (const std::string v : {"atomic", "one_shot"}) expect_verifies(config(v, "stream_k", 2, 5, 10, 4));
}

// 31 tiles (1 x 31) and 47 tiles (1 x 47); hybrid's remainder tiles over 3 and 2 blocks.
TEST(StreamK, ThirtyOneAndFortySevenTilesVerify) {
    expect_verifies(config("one_shot", "stream_k", 2, 1, 31, 3));
    expect_verifies(config("atomic", "hybrid", 2, 1, 31, 3));
    expect_verifies(config("atomic", "stream_k", 2, 1, 47, 2));
    expect_verifies(config("one_shot", "hybrid", 2, 1, 47, 6));
}

// 8 tiles of 6 panels on 24 blocks: every tile over three blocks (2 panels each); with a bias
// (added once, by the first segment), low-precision output (the fix-up's TCVT), bf16, 4 ranks.
TEST(StreamK, TilesSplitOverThreeBlocksWithBiasAndCasts) {
    RunRequest a = config("one_shot", "stream_k", 4, 2, 4, 6);
    a.bias = kernels::BiasKind::N;
    a.out_dtype = DType::F16;
    expect_verifies(a);
    RunRequest b = config("atomic", "stream_k", 2, 2, 4, 6);
    b.bias = kernels::BiasKind::M;
    b.dtype = DType::BF16;
    b.out_dtype = DType::BF16;
    expect_verifies(b);
    RunRequest c = config("atomic", "hybrid", 2, 5, 5, 3);  // 1 remainder tile, 3 blocks of one panel
    c.bias = kernels::BiasKind::N;
    expect_verifies(c);
}

// matmul_all_scatter: each rank's column block is 5 x 5 tiles (25 on 24 blocks), 4 panels;
// fused_sequential stores a split tile into every rank's output from UB after its fix-up;
// specialized's GEMM clusters (20 of 24 by default) fix up and flag, its scatter clusters push.
RunRequest scatter_config(const std::string& variant, const std::string& schedule, int m_tiles, int n_tiles,
                         int k_panels) {
    RunRequest cfg = config(variant, schedule, 2, m_tiles, n_tiles, k_panels);
    cfg.op = "matmul_all_scatter";
    cfg.n *= 2;  // the global N: two column blocks of n_tiles tiles
    return cfg;
}

TEST(StreamK, MatmulAllScatterVerifies) {
    for (const std::string v : {"fused_sequential", "specialized"})
        for (const std::string s : {"stream_k", "hybrid"}) expect_verifies(scatter_config(v, s, 5, 5, 4));
    RunRequest b = scatter_config("specialized", "stream_k", 1, 31, 3);
    b.bias = kernels::BiasKind::N;
    b.out_dtype = DType::F16;
    expect_verifies(b);
    RunRequest c = scatter_config("fused_sequential", "hybrid", 1, 47, 6);
    c.bias = kernels::BiasKind::M;
    expect_verifies(c);
    for (const std::string v : {"fused_sequential", "specialized"}) {
        const ProgramOutput out = run(scatter_config(v, "stream_k", 5, 5, 4), "skip_fixup_partial");
        EXPECT_EQ(out.results.verification, Verification::Failed) << v;
    }
}

TEST(StreamK, AFixupThatSkipsAPartialFailsVerification) {
    for (const std::string v : {"atomic", "one_shot"}) {
        const ProgramOutput out = run(config(v, "stream_k", 2, 5, 5, 4), "skip_fixup_partial");
        EXPECT_EQ(out.results.verification, Verification::Failed) << v;
    }
}

TEST(StreamK, FunctionalAndTimingOnlyGiveTheSameTimes) {
    for (const std::string s : {"stream_k", "hybrid"}) {
        RunRequest cfg = config("atomic", s, 2, 5, 5, 4);
        const ProgramOutput f = run(cfg);
        cfg.timing_only = true;
        const ProgramOutput t = run(cfg);
        EXPECT_EQ(f.results.times.compute_only_us, t.results.times.compute_only_us) << s;
        EXPECT_EQ(f.results.times.pipelined_us, t.results.times.pipelined_us) << s;
        EXPECT_EQ(f.results.times.seq_comm_us, t.results.times.seq_comm_us) << s;
    }
}

TEST(StreamK, UnofferedScheduleAndTooManyBlocksAreRefused) {
    RunRequest cfg = config("two_shot", "stream_k", 2, 5, 5, 4);
    const Profile p = test::b1_profile();
    EXPECT_THROW((void)resolve_run(cfg, p), SimError);
    RunRequest many = config("atomic", "stream_k", 2, 5, 5, 4);
    many.compute_blocks = 48;
    try {
        (void)resolve_run(many, p);
        ADD_FAILURE() << "48 blocks accepted";
    } catch (const SimError& e) {
        const std::string msg = message_in(e, Dialect::Cli);  // as the command line says it
        EXPECT_NE(msg.find("--compute-blocks 48"), std::string::npos) << msg;
    }
}

TEST(StreamK, TraceShowsFixupWaitsWithFlowsFromThePartials) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("tandem_stream_k_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    RunRequest cfg = config("atomic", "stream_k", 2, 5, 5, 4);
    cfg.timing_only = true;
    RunOutputs traced;
    traced.trace_file = (dir / "t.json").string();
    const Profile p = test::b1_profile();
    write_trace(traced, p, run_program(resolve_run(cfg, p), p, traced));
    std::ifstream f(traced.trace_file);
    const nlohmann::json trace = nlohmann::json::parse(f);
    fs::remove_all(dir);
    std::vector<nlohmann::json> finishes;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "f") finishes.push_back(e);
    int fixup_waits = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X" || e["name"] != "TWAIT" || !e["args"].contains("signal")) continue;
        if (e["args"]["signal"].get<std::string>().rfind("partial_ready[slot=", 0) != 0) continue;
        if (e["cat"].get<std::string>().find("stall") == std::string::npos) continue;
        ++fixup_waits;
        const double begin = e["ts"].get<double>(), end = begin + e["dur"].get<double>();
        int incoming = 0;
        for (const auto& fin : finishes) {
            if (fin["pid"] == e["pid"] && fin["tid"] == e["tid"] && fin["ts"].get<double>() >= begin &&
                fin["ts"].get<double>() <= end)
                ++incoming;
        }
        EXPECT_EQ(incoming, 1) << e.dump();
    }
    EXPECT_GT(fixup_waits, 0);
}

}  // namespace stream_k_test
}  // namespace tandem::host
