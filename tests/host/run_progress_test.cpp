// A run's progress report (host/run/run_progress.hpp): what a line says, and that reporting
// leaves the run's results as they are (it only reads the coordinator from another thread).
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include "host/ops/op_facade.hpp"
#include "host/run/op_session.hpp"
#include "host/run/run_progress.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace run_progress_test {

TEST(RunProgress, ALineNamesTheViewAndHowFarItHasSimulated) {
    ProgressSnapshot s;
    s.host_s = 42.3;
    EXPECT_EQ(format_progress(s), "[progress] 42 s: setting up the machine");
    s.started = true;
    s.view = kernels::ViewKind::Pipelined;
    s.simulated_in_view_us = 1250.0;
    s.simulated_us = 12804.0;
    s.windows = 1234567;
    EXPECT_EQ(format_progress(s),
              "[progress] 42 s: pipelined view (3 of 3), 1.25 ms simulated in it (12.80 ms in all), 1,234,567 windows");
    s.view = kernels::ViewKind::ComputeOnly;
    s.warm_up = true;
    s.simulated_in_view_us = 850.04;
    s.simulated_us = 850.04;
    s.windows = 999;
    EXPECT_EQ(format_progress(s),
              "[progress] 42 s: compute-only view (1 of 3), warm-up runs, 850.0 us simulated in it (850.0 us in all), 999 windows");
}

RunRequest small_request() {
    RunRequest r;
    r.op = "matmul_all_reduce";
    r.variant = "one_shot";
    r.ranks = 4;
    r.m = r.k = r.n = 1024;
    r.timing_only = true;
    return r;
}

TEST(RunProgress, ReportingLeavesTheResultsAsTheyAre) {
    const Profile p = test::b1_profile();
    const ResolvedRun run = resolve_run(small_request(), p);
    const ViewsOutcome quiet = run_op_views(p, run, nullptr);
    std::ostringstream lines;
    ProgressSink sink;
    sink.out = &lines;
    sink.first = std::chrono::milliseconds(0);  // at once, then as often as the host lets it
    sink.every = std::chrono::milliseconds(1);
    const ViewsOutcome reported = run_op_views(p, run, nullptr, {}, 0, sink);
    EXPECT_EQ(reported.slowest.compute_only_us, quiet.slowest.compute_only_us);
    EXPECT_EQ(reported.slowest.seq_comm_us, quiet.slowest.seq_comm_us);
    EXPECT_EQ(reported.slowest.pipelined_us, quiet.slowest.pipelined_us);
    EXPECT_EQ(reported.instructions, quiet.instructions);
    EXPECT_EQ(reported.windows, quiet.windows);
    // The first report is due at once; every line is a whole report (no terminal: no '\r').
    const std::string text = lines.str();
    ASSERT_FALSE(text.empty());
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) EXPECT_EQ(line.rfind("[progress] ", 0), 0u) << line;
    EXPECT_EQ(text.find('\r'), std::string::npos);
}

}  // namespace run_progress_test
}  // namespace tandem::host
