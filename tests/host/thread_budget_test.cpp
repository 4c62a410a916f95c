// The host thread budget (sim/host_threads.hpp, ClusterOptions::host_threads): a run's pools are
// the size it is given, and results do not depend on it: the same program with a 1-thread and an
// 8-thread budget gives the same results JSON, event log, trace and output bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "host/batch/sweep_runner.hpp"
#include "sim/host_threads.hpp"
#include "sim/machine/cluster.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace thread_budget_test {

namespace fs = std::filesystem;

struct BudgetRun {
    std::string json;   // the results JSON less its host-time figures
    std::string log;    // every record of the pipelined view, formatted
    std::string trace;  // the Chrome trace's bytes
    std::string output; // every rank's output values
};

// One functional AllGather+GEMM run on 4 ranks (two streams each, more comm blocks than cores'
// waves of work), logged and traced, with `threads` host threads.
BudgetRun run_with_budget(int threads) {
    const fs::path dir = fs::temp_directory_path() / fmt::format("tandem_budget_test_{}_{}", ::getpid(), threads);
    fs::create_directories(dir);
    RunRequest cfg;
    cfg.ranks = 4;
    cfg.m = 1024;
    cfg.k = 512;
    cfg.n = 512;
    RunOutputs outputs;
    outputs.record_log = true;
    outputs.trace_file = (dir / "trace.json").string();
    outputs.host_threads = threads;
    const Profile p = test::b1_profile();
    const ProgramOutput out = run_program(resolve_run(cfg, p), p, outputs);
    write_trace(outputs, p, out);
    EXPECT_EQ(out.results.verification, Verification::Passed);

    BudgetRun run;
    run.json = to_json(out.results).dump(1);
    for (const InstrRecord& r : out.bench.pipelined_log) run.log += format_record(r) + "\n";
    std::ifstream f(outputs.trace_file);
    std::stringstream ss;
    ss << f.rdbuf();
    run.trace = ss.str();
    for (const DeviceMatrix& m : out.bench.out) run.output.append(reinterpret_cast<const char*>(m.data()), m.bytes.size());
    fs::remove_all(dir);
    return run;
}

TEST(ThreadBudget, OneThreadAndManyThreadsGiveIdenticalResults) {
    const BudgetRun one = run_with_budget(1);
    const BudgetRun many = run_with_budget(8);
    // The runs did something worth comparing.
    EXPECT_NE(one.json.find("\"pipelined_us\""), std::string::npos);
    EXPECT_GT(one.log.size(), 10000U);
    EXPECT_GT(one.trace.size(), 10000U);
    EXPECT_FALSE(one.output.empty());
    EXPECT_EQ(one.json, many.json);
    EXPECT_EQ(one.log, many.log);
    EXPECT_EQ(one.trace, many.trace);
    EXPECT_EQ(one.output, many.output);
}

TEST(ThreadBudget, TheClusterSizesItsPoolsFromItsOptions) {
    const Profile p = test::b1_profile();
    EXPECT_EQ(Cluster(p, ClusterOptions{1, DataMode::TimingOnly, false, false, 3}).host_threads(), 3);
    EXPECT_EQ(Cluster(p, ClusterOptions{1, DataMode::TimingOnly, false, false, 0}).host_threads(), host_core_count());
    try {
        Cluster(p, ClusterOptions{1, DataMode::TimingOnly, false, false, -2});
        FAIL() << "a negative thread budget was accepted";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("host threads: -2"), std::string::npos) << e.what();
    }
}

// A sweep running J rows at once gives each row's machine its share of the host, not all of it.
TEST(ThreadBudget, ASweepSharesTheHostAmongTheRowsItRunsAtOnce) {
    const auto profile = std::make_shared<const Profile>(test::b1_profile());
    std::vector<SweepJob> jobs;
    for (int line = 1; line <= 2; ++line) {
        SweepJob j;
        j.line = line;
        j.origin = fmt::format("budget test row {}", line);
        RunRequest r;
        r.timing_only = true;
        r.m = 1024;
        r.k = 512;
        r.n = 512;
        j.run = resolve_run(r, *profile);
        j.profile = profile;
        jobs.push_back(std::move(j));
    }
    for (int at_once : {1, 2}) {
        SweepOptions opt;
        opt.jobs = at_once;
        SweepRunner runner(opt);
        runner.run(jobs);
        ASSERT_EQ(runner.entries().size(), jobs.size());
        for (const SweepEntry& e : runner.entries()) {
            EXPECT_EQ(e.status, SweepStatus::Ok) << e.error;
            EXPECT_EQ(e.job.host_threads, thread_share(host_core_count(), at_once)) << "--jobs " << at_once;
        }
    }
}

TEST(ThreadBudget, ConcurrentUsersShareIt) {
    EXPECT_GE(host_core_count(), 1);
    EXPECT_EQ(thread_share(8, 2), 4);
    EXPECT_EQ(thread_share(8, 3), 2);
    EXPECT_EQ(thread_share(2, 8), 1);  // never none
    EXPECT_EQ(thread_share(5, 0), 5);
}

}  // namespace thread_budget_test
}  // namespace tandem::host
