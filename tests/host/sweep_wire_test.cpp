// The messages of a sweep spread over MPI processes (host/batch/sweep_wire.hpp): a row's result sent
// from another process and decoded on rank 0 gives byte-identical output files; malformed
// messages are refused. (The transport itself, mpirun, is ctest's mpi_sweep.)
#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "host/batch/mpi_launch.hpp"
#include "host/batch/sweep_outputs.hpp"
#include "host/batch/sweep_plan.hpp"
#include "host/batch/sweep_runner.hpp"
#include "host/batch/sweep_wire.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace sweep_wire_test {

// Timing-only rows of different ops and modes, and one functional row (verified, with data).
const char* kRows =
    "ranks,m,k,n,comm_mode,timing_only,op\n"
    "2,1024,512,512,mesh,,\n"
    "4,2048,1024,1024,ring,,\n"
    "2,512,512,256,mesh,false,\n"
    "2,1024,512,512,,,matmul_all_reduce\n";

TEST(SweepWire, ResultsSentBetweenProcessesGiveByteIdenticalFiles) {
    RunRequest cli;
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep_text(kRows, "rows.csv", cli, profiles);
    ASSERT_TRUE(plan.bad.empty()) << plan.bad.front().message;
    ASSERT_EQ(plan.jobs.size(), 4u);
    SweepOptions opt;
    opt.jobs = 2;
    SweepRunner runner(opt);
    runner.run(plan.jobs);
    const std::vector<SweepEntry> sent = runner.entries();
    std::vector<SweepEntry> received;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        ASSERT_EQ(sent[i].status, SweepStatus::Ok) << sent[i].error;
        DecodedResult d = decode_sweep_result(encode_sweep_result(i, sent[i]));
        EXPECT_EQ(d.index, i);
        d.entry.job = sent[i].job;  // as rank 0 does: the job is its own
        received.push_back(std::move(d.entry));
    }
    EXPECT_EQ(received[2].results.verification, Verification::Passed);
    EXPECT_EQ(sweep_csv(received), sweep_csv(sent));
    EXPECT_EQ(sweep_json(received).dump(2), sweep_json(sent).dump(2));
    EXPECT_EQ(format_sweep_table(received), format_sweep_table(sent));
    for (std::size_t i = 0; i < sent.size(); ++i) {  // the identity, and the seed's format with it
        EXPECT_EQ(format_summary(received[i].results), format_summary(sent[i].results)) << "row " << i;
    }
}

TEST(SweepWire, FailedRowKeepsItsError) {
    SweepEntry e;
    e.status = SweepStatus::Failed;
    e.error = "simulated deadlock: rank 1, stream 0, block 3";
    const DecodedResult d = decode_sweep_result(encode_sweep_result(7, e));
    EXPECT_EQ(d.index, 7u);
    EXPECT_EQ(d.entry.status, SweepStatus::Failed);
    EXPECT_EQ(d.entry.error, e.error);
    EXPECT_FALSE(d.entry.has_results);
}

TEST(SweepWire, RequestsAssignmentsAndStartRoundTrip) {
    EXPECT_EQ(decode_request(encode_request(3)), 3);
    const std::vector<std::size_t> given = {4, 5, 17};
    EXPECT_EQ(decode_assign(encode_assign(given)), given);
    EXPECT_TRUE(decode_assign(encode_assign({})).empty());  // "no more rows"

    SweepStart s{true, "ranks,m,k,n\n2,1024,512,512\n# a, comment\n", {2, 4}};
    const SweepStart back = decode_sweep_start(encode_sweep_start(s));
    EXPECT_TRUE(back.ok);
    EXPECT_EQ(back.text, s.text);
    EXPECT_EQ(back.lines, s.lines);
    EXPECT_FALSE(decode_sweep_start(encode_sweep_start(SweepStart{})).ok);
    const SweepStart no_rows = decode_sweep_start(encode_sweep_start(SweepStart{true, "x", {}}));
    EXPECT_TRUE(no_rows.ok);
    EXPECT_TRUE(no_rows.lines.empty());
}

TEST(SweepWire, MalformedMessagesAreRefused) {
    EXPECT_THROW(decode_request("0"), SimError);
    EXPECT_THROW(decode_request("2x"), SimError);
    EXPECT_THROW(decode_assign("1 two"), SimError);
    EXPECT_THROW(decode_sweep_result("not cbor"), SimError);
    EXPECT_THROW(decode_sweep_start("X"), SimError);
    EXPECT_THROW(decode_sweep_start("T1,2"), SimError);  // no newline before the text
}

TEST(SweepWire, LaunchSizeComesFromTheLaunchersEnvironment) {
    const char* keep_ompi = std::getenv("OMPI_COMM_WORLD_SIZE");
    const char* keep_pmi = std::getenv("PMI_SIZE");
    const std::optional<std::string> ompi = keep_ompi ? std::optional<std::string>(keep_ompi) : std::nullopt;
    const std::optional<std::string> pmi = keep_pmi ? std::optional<std::string>(keep_pmi) : std::nullopt;
    ::unsetenv("OMPI_COMM_WORLD_SIZE");
    ::unsetenv("PMI_SIZE");
    EXPECT_EQ(mpi_launch_size_from_env(), 1);
    ::setenv("PMI_SIZE", "3", 1);
    EXPECT_EQ(mpi_launch_size_from_env(), 3);
    ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    EXPECT_EQ(mpi_launch_size_from_env(), 4);
    ::setenv("OMPI_COMM_WORLD_SIZE", "four", 1);
    EXPECT_EQ(mpi_launch_size_from_env(), 3);  // not a number: the next launcher's
    ::unsetenv("OMPI_COMM_WORLD_SIZE");
    ::unsetenv("PMI_SIZE");
    if (ompi) ::setenv("OMPI_COMM_WORLD_SIZE", ompi->c_str(), 1);
    if (pmi) ::setenv("PMI_SIZE", pmi->c_str(), 1);
}

}  // namespace sweep_wire_test
}  // namespace tandem::host
