// --sweep (host/batch/: sweep_plan, sweep_runner, sweep_outputs, sweep_command): CSV and JSON
// rows to runs, bad rows reported by line and skipped, results in input order and equal to
// running each row alone, the output files, determinism over the pool size, interruption. Small
// timing-only shapes: the whole file runs in seconds.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "host/run/program.hpp"
#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "host/batch/sweep_command.hpp"
#include "host/batch/sweep_outputs.hpp"
#include "host/batch/sweep_plan.hpp"
#include "host/batch/sweep_runner.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace sweep_test {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tandem_sweep_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Lines 3, 5 and 8 are good; line 4 has a bad number, line 7 breaks M % (n*base-m) == 0.
const char* kCsv =
    "# three good rows, two bad ones\n"  // 1
    "ranks,m,k,n,comm_mode\n"            // 2
    "2,1024,512,512,mesh\n"              // 3
    "2,1024,5x2,512,mesh\n"              // 4
    "4,2048,1024,1024,ring\n"            // 5
    "\n"                                 // 6
    "2,1000,512,512,mesh\n"              // 7
    "2,512,512,512,\n";                  // 8

// The same rows as JSON; the objects start on lines 2, 3, 4, 5, 6.
const char* kJson =
    "[\n"
    "  {\"ranks\": 2, \"m\": 1024, \"k\": 512, \"n\": 512, \"comm_mode\": \"mesh\"},\n"
    "  {\"ranks\": 2, \"m\": 1024, \"k\": \"5x2\", \"n\": 512},\n"
    "  {\"ranks\": 4, \"m\": 2048, \"k\": 1024, \"n\": 1024, \"comm-mode\": \"ring\"},\n"
    "  {\"ranks\": 2, \"m\": 1000, \"k\": 512, \"n\": 512},\n"
    "  {\"ranks\": 2, \"m\": 512, \"k\": 512, \"n\": 512}\n"
    "]\n";

RunRequest cli_defaults() {
    RunRequest c;  // -v Ascend910B1, tile 128x256, blocks from the profile
    return c;
}

std::vector<SweepEntry> run_plan(const SweepPlan& plan, int jobs, const std::string& prefix) {
    SweepOptions opt;
    opt.jobs = jobs;
    opt.out_prefix = prefix;
    SweepRunner runner(opt);
    runner.set_bad_rows(static_cast<int>(plan.bad.size()));
    runner.run(plan.jobs);
    EXPECT_FALSE(runner.interrupted());
    EXPECT_EQ(runner.failed(), 0);
    return runner.entries();
}

TEST(Sweep, CsvBadRowsAreReportedByLineAndSkipped) {
    const fs::path dir = fresh_dir("csv_bad");
    write_text(dir / "rows.csv", kCsv);
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep(dir / "rows.csv", cli_defaults(), profiles);
    ASSERT_EQ(plan.jobs.size(), 3u);
    EXPECT_EQ(plan.jobs[0].line, 3);
    EXPECT_EQ(plan.jobs[1].line, 5);
    EXPECT_EQ(plan.jobs[2].line, 8);
    ASSERT_EQ(plan.bad.size(), 2u);
    EXPECT_EQ(plan.bad[0].line, 4);
    EXPECT_NE(plan.bad[0].message.find("rows.csv line 4: k: '5x2' is not a whole decimal number"), std::string::npos)
        << plan.bad[0].message;
    EXPECT_EQ(plan.bad[1].line, 7);
    EXPECT_NE(plan.bad[1].message.find("rows.csv line 7: --gm 1000"), std::string::npos) << plan.bad[1].message;
    for (const SweepJob& j : plan.jobs) {
        EXPECT_TRUE(j.run.request.timing_only);  // sweeps are timing-only by default
        EXPECT_EQ(j.run.request.compute_blocks, j.profile->chip.aic_cores);
    }
    EXPECT_EQ(plan.jobs[1].run.request.comm_mode, "ring");
}

// A knob's words work in a sweep cell as on the command line (routing: zipf:S sets zipf_s_pct).
TEST(Sweep, KnobWordsInCells) {
    const fs::path dir = fresh_dir("knob_words");
    write_text(dir / "rows.csv",
               "op,ranks,m,k,n,routing\n"
               "moe_ffn,2,32,256,512,zipf:1.5\n"
               "moe_ffn,2,32,256,512,uniform\n"
               "moe_ffn,2,32,256,512,heavy\n");
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep(dir / "rows.csv", cli_defaults(), profiles);
    ASSERT_EQ(plan.jobs.size(), 2u);
    EXPECT_EQ(plan.jobs[0].run.request.knobs.at("routing"), 2);
    EXPECT_EQ(plan.jobs[0].run.request.knobs.at("zipf_s_pct"), 150);
    EXPECT_EQ(plan.jobs[1].run.request.knobs.at("routing"), 1);
    ASSERT_EQ(plan.bad.size(), 1u);
    EXPECT_NE(plan.bad[0].message.find("rows.csv line 4: routing: 'heavy' is neither a whole decimal number nor one of "
                                       "round_robin, uniform, zipf or zipf:S"),
              std::string::npos)
        << plan.bad[0].message;
}

TEST(Sweep, ResultsInInputOrderEqualToRunningEachRowAlone) {
    const fs::path dir = fresh_dir("alone");
    write_text(dir / "rows.csv", kCsv);
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep(dir / "rows.csv", cli_defaults(), profiles);
    const std::vector<SweepEntry> entries = run_plan(plan, 2, (dir / "s").string());
    ASSERT_EQ(entries.size(), 3u);
    const int lines[] = {3, 5, 8};
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const SweepEntry& e = entries[i];
        ASSERT_TRUE(e.has_results);
        EXPECT_EQ(e.status, SweepStatus::Ok);
        EXPECT_EQ(e.job.line, lines[i]);
        // The row run alone, from a config built by hand as the command line would.
        RunRequest alone;
        alone.ranks = e.job.run.request.ranks;
        alone.m = e.job.run.request.m;
        alone.k = e.job.run.request.k;
        alone.n = e.job.run.request.n;
        alone.comm_mode = e.job.run.request.comm_mode;
        alone.timing_only = true;
        const Profile& p = *e.job.profile;
        const ProgramOutput out = run_program(resolve_run(alone, p), p);
        EXPECT_EQ(e.results.times.pipelined_us, out.results.times.pipelined_us) << "line " << e.job.line;
        EXPECT_EQ(e.results.times.seq_comm_us, out.results.times.seq_comm_us);
        EXPECT_EQ(e.results.id.run.m, alone.m);
    }
    EXPECT_EQ(entries[0].results.id.run.ranks, 2);
    EXPECT_EQ(entries[1].results.id.run.ranks, 4);
    EXPECT_EQ(entries[1].results.id.run.comm_mode, "ring");
    EXPECT_EQ(entries[2].results.id.run.m, 512);
}

TEST(Sweep, OutputFilesHaveEveryContractKey) {
    const fs::path dir = fresh_dir("files");
    write_text(dir / "rows.csv", kCsv);
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep(dir / "rows.csv", cli_defaults(), profiles);
    const std::vector<SweepEntry> entries = run_plan(plan, 2, (dir / "s").string());

    const nlohmann::json j = nlohmann::json::parse(read_text(dir / "s.json"));
    ASSERT_TRUE(j.is_array());
    ASSERT_EQ(j.size(), 3u);
    const int lines[] = {3, 5, 8};
    for (std::size_t i = 0; i < j.size(); ++i) {
        for (const std::string& key : contract_keys()) EXPECT_TRUE(j[i].contains(key)) << key;
        EXPECT_EQ(j[i]["sweep_line"], lines[i]);
        EXPECT_EQ(j[i]["data_mode"], "timing-only");
        EXPECT_EQ(j[i]["verification"], "skipped");
        EXPECT_EQ(j[i]["pipelined_us"].get<double>(), entries[i].results.times.pipelined_us);
        EXPECT_GT(j[i]["chunk_tiles"].get<int>(), 0);
    }

    std::istringstream csv(read_text(dir / "s.csv"));
    std::string header;
    std::getline(csv, header);
    std::string expected_header;
    for (const std::string& key : contract_keys()) expected_header += key + ",";
    expected_header += "sweep_line,op,variant,schedule,dtype,out_dtype,bias,comm_kind,comm_payload_gib_s,chunk_tiles";
    EXPECT_EQ(header, expected_header);  // contract keys in docs/RESULTS.md order, then ours
    std::vector<std::string> rows;
    for (std::string line; std::getline(csv, line);) rows.push_back(line);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].rfind("Ascend910B1,2,1024,512,512,", 0), 0u) << rows[0];
    EXPECT_NE(rows[1].find(",ring,timing-only,"), std::string::npos) << rows[1];
    for (const auto& leftover : fs::directory_iterator(dir)) {
        EXPECT_EQ(leftover.path().string().find(".tmp."), std::string::npos) << leftover.path();
    }
}

TEST(Sweep, JsonInputGivesTheSameRunsWithLineNumbers) {
    const fs::path dir = fresh_dir("json");
    write_text(dir / "rows.csv", kCsv);
    write_text(dir / "rows.json", kJson);
    ProfileCache profiles;
    const SweepPlan from_json = plan_sweep(dir / "rows.json", cli_defaults(), profiles);
    ASSERT_EQ(from_json.jobs.size(), 3u);
    EXPECT_EQ(from_json.jobs[0].line, 2);
    EXPECT_EQ(from_json.jobs[1].line, 4);
    EXPECT_EQ(from_json.jobs[2].line, 6);
    ASSERT_EQ(from_json.bad.size(), 2u);
    EXPECT_NE(from_json.bad[0].message.find("rows.json line 3: k: '5x2'"), std::string::npos) << from_json.bad[0].message;
    EXPECT_NE(from_json.bad[1].message.find("rows.json line 5: --gm 1000"), std::string::npos) << from_json.bad[1].message;

    const std::vector<SweepEntry> a = run_plan(from_json, 2, "");
    const std::vector<SweepEntry> b = run_plan(plan_sweep(dir / "rows.csv", cli_defaults(), profiles), 2, "");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].results.times.pipelined_us, b[i].results.times.pipelined_us);
}

TEST(Sweep, OneAndTwoJobsGiveByteIdenticalFiles) {
    const fs::path dir = fresh_dir("jobs");
    write_text(dir / "rows.csv",
               "ranks,m,k,n,comm_mode,base_m,chunk_tiles\n"
               "4,2048,1024,1024,mesh,,\n"
               "2,1024,512,512,ring,64,\n"
               "8,4096,1024,1024,mesh,,2\n"
               "2,1024,1024,512,mesh,,\n"
               "4,2048,512,1024,ring,,1\n");
    std::string files[2][2];
    for (int jobs : {1, 2}) {
        BatchOptions batch;
        batch.sweep_file = (dir / "rows.csv").string();
        batch.out_prefix = (dir / ("j" + std::to_string(jobs))).string();
        batch.jobs = jobs;
        batch.quiet = true;
        std::ostringstream out, err;
        const CommandOutcome r = run_sweep_command(cli_defaults(), batch, out, err, nullptr, false);
        EXPECT_EQ(r.exit_code, 0) << err.str();
        files[jobs - 1][0] = read_text(batch.out_prefix + ".csv");
        files[jobs - 1][1] = read_text(batch.out_prefix + ".json");
    }
    EXPECT_FALSE(files[0][0].empty());
    EXPECT_EQ(files[0][0], files[1][0]);
    EXPECT_EQ(files[0][1], files[1][1]);
}

TEST(Sweep, CommandReportsBadRowsAndExitsNonZeroButWritesTheGoodOnes) {
    const fs::path dir = fresh_dir("command");
    write_text(dir / "rows.csv", kCsv);
    BatchOptions cli;
    cli.sweep_file = (dir / "rows.csv").string();
    cli.out_prefix = (dir / "out" / "s").string();  // the directory is created
    cli.jobs = 2;
    std::ostringstream out, err;
    const CommandOutcome r = run_sweep_command(cli_defaults(), cli, out, err, nullptr, false);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_FALSE(r.abandoned_runs);
    const std::string e = err.str();
    EXPECT_NE(e.find("sweep " + cli.sweep_file + " line 4: "), std::string::npos) << e;
    EXPECT_NE(e.find("sweep " + cli.sweep_file + " line 7: "), std::string::npos) << e;
    EXPECT_NE(e.find("sweep: 5/5 done, 2 bad, elapsed"), std::string::npos) << e;  // progress, not a terminal
    const std::string o = out.str();
    EXPECT_NE(o.find("pipelined us"), std::string::npos) << o;  // the table
    EXPECT_NE(o.find("3 of 5 rows ran (2 bad, 0 failed)"), std::string::npos) << o;
    EXPECT_EQ(nlohmann::json::parse(read_text(cli.out_prefix + ".json")).size(), 3u);
}

TEST(Sweep, InterruptedSweepStartsNothingAndSavesWhatIsDone) {
    const fs::path dir = fresh_dir("interrupt");
    write_text(dir / "rows.csv", kCsv);
    BatchOptions cli;
    cli.sweep_file = (dir / "rows.csv").string();
    cli.out_prefix = (dir / "s").string();
    cli.quiet = true;
    std::atomic<int> interrupts{1};  // Ctrl-C before the first row
    std::ostringstream out, err;
    const CommandOutcome r = run_sweep_command(cli_defaults(), cli, out, err, &interrupts, false);
    EXPECT_EQ(r.exit_code, 130);
    EXPECT_FALSE(r.abandoned_runs);
    EXPECT_NE(err.str().find("interrupted: 0 of 5 rows saved"), std::string::npos) << err.str();
    EXPECT_EQ(nlohmann::json::parse(read_text(dir / "s.json")), nlohmann::json::array());
}

TEST(Sweep, FileLevelProblemsAreOneError) {
    const fs::path dir = fresh_dir("file_errors");
    ProfileCache profiles;
    auto message = [&](const std::string& name, const std::string& text) -> std::string {
        write_text(dir / name, text);
        try {
            plan_sweep(dir / name, cli_defaults(), profiles);
        } catch (const tandem::SimError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message("a.csv", "ranks,m,k,bogus\n2,1024,512,512\n").find("line 1: unknown column 'bogus'"),
              std::string::npos);
    EXPECT_NE(message("b.csv", "ranks,m,k\n2,1024,512\n").find("no 'n' column"), std::string::npos);
    EXPECT_NE(message("c.json", "[{\"ranks\": 2,]").find("not valid JSON"), std::string::npos);
    EXPECT_NE(message("d.json", "{\"ranks\": 2}").find("array of objects"), std::string::npos);
    EXPECT_NE(message("e.csv", "# only a comment\n").find("no header row"), std::string::npos);
    EXPECT_THROW(plan_sweep(dir / "missing.csv", cli_defaults(), profiles), tandem::SimError);
}

TEST(Sweep, RowsTakeProfilesAndCommandLineDefaults) {
    const fs::path dir = fresh_dir("defaults");
    RunRequest cli = cli_defaults();
    cli.base_m = 64;
    cli.comm_blocks = 8;
    write_text(dir / "rows.csv",
               "ranks,m,k,n,profile,base_m,timing_only\n"
               "2,1024,512,512,,,\n"                       // 2: the command line's tile and blocks
               "2,1024,512,512,Ascend910B3,128,false\n"    // 3: another SoC, functional
               "2,1024,512,512,NoSuchSoc,,\n"              // 4: unknown profile
               "2,1024,512,512,,,maybe\n");                // 5: not a boolean
    ProfileCache profiles;
    const SweepPlan plan = plan_sweep(dir / "rows.csv", cli, profiles);
    ASSERT_EQ(plan.jobs.size(), 2u);
    EXPECT_EQ(plan.jobs[0].run.request.base_m, 64);
    EXPECT_EQ(plan.jobs[0].run.request.comm_blocks, 8);
    EXPECT_TRUE(plan.jobs[0].run.request.timing_only);
    EXPECT_EQ(plan.jobs[1].profile->name, "Ascend910B3");
    EXPECT_EQ(plan.jobs[1].run.request.compute_blocks, plan.jobs[1].profile->chip.aic_cores);
    EXPECT_FALSE(plan.jobs[1].run.request.timing_only);
    ASSERT_EQ(plan.bad.size(), 2u);
    EXPECT_NE(plan.bad[0].message.find("line 4: profile: "), std::string::npos) << plan.bad[0].message;
    EXPECT_NE(plan.bad[1].message.find("line 5: timing_only: 'maybe'"), std::string::npos) << plan.bad[1].message;
    const std::vector<SweepEntry> entries = run_plan(plan, 2, "");
    EXPECT_EQ(entries[1].results.verification, Verification::Passed);  // functional rows verify
}

TEST(Sweep, FlagsThatBelongToOneRunAreRefused) {
    auto error_of = [](std::vector<const char*> args) -> std::string {
        args.insert(args.begin(), "allgather_gemm");
        try {
            parse_command_line(static_cast<int>(args.size()), args.data());
        } catch (const tandem::SimError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(error_of({"--sweep", "r.csv", "--json", "x.json"}).find("--json with --sweep"), std::string::npos);
    EXPECT_NE(error_of({"--sweep", "r.csv", "--gm", "1024"}).find("each row gives its shape"), std::string::npos);
    EXPECT_NE(error_of({"--sweep", "r.csv", "--tune"}).find("use one"), std::string::npos);
    EXPECT_NE(error_of({"--jobs", "2"}).find("--jobs applies to --sweep and --tune"), std::string::npos);
    EXPECT_NE(error_of({"--tune", "--jobs", "0"}).find("--jobs 0"), std::string::npos);
    EXPECT_EQ(error_of({"--sweep", "r.csv", "--jobs", "2", "--sweep-out", "o/s", "-v", "Ascend910B2"}), "");
}

}  // namespace sweep_test
}  // namespace tandem::host
