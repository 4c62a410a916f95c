// The command line (host/cli/options.hpp) and the ops facade's checks (host/ops/op_facade.hpp)
// as the command line says them: bad flags and shapes give one clear line naming the flag, the
// value and a nearby valid value; good configs parse.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "sim/profile.hpp"
#include "sim/sim_error.hpp"

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

namespace tandem::host {
namespace host_options_test {

CommandLine parse(std::vector<std::string> args) {
    args.insert(args.begin(), "tandem");
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

const Profile& b1() {
    static const Profile p = load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/Ascend910B1.toml");
    return p;
}

// Parses, resolves and checks as the program does; returns the error as the command line says
// it, or "" when the config is accepted.
std::string validation_error(const std::vector<std::string>& args) {
    try {
        const CommandLine cl = parse(args);
        check_program_options(cl, resolve_run(cl.run, b1()));
    } catch (const SimError& e) {
        return cli_message(e);
    }
    return "";
}

// The CLI11 error message (with its exit code) for a command line that must not parse.
struct CliFailure {
    std::string message;
    int exit_code = 0;
};
CliFailure cli_error(const std::vector<std::string>& args) {
    try {
        parse(args);
    } catch (const CLI::Error& e) {
        std::ostringstream out, err;
        const int code = report_cli_error(e, out, err);
        return {err.str(), code};
    }
    ADD_FAILURE() << "expected a parse error";
    return {};
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
    for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

void expect_one_line(const std::string& text) {
    ASSERT_FALSE(text.empty());
    const std::string body = text.back() == '\n' ? text.substr(0, text.size() - 1) : text;
    EXPECT_EQ(body.find('\n'), std::string::npos) << text;
}

// --- good configs ---

TEST(HostOptions, DefaultsAreTheSeedsSmallCase) {
    const CommandLine cl = parse({});
    const RunRequest& c = cl.run;
    EXPECT_EQ(c.op, "allgather_gemm");
    EXPECT_EQ(c.soc, "Ascend910B1");
    EXPECT_EQ(c.ranks, 2);
    EXPECT_EQ(c.m, 2048);
    EXPECT_EQ(c.k, 2048);
    EXPECT_EQ(c.n, 1024);
    EXPECT_EQ(c.base_m, 128);
    EXPECT_EQ(c.base_n, 256);
    EXPECT_FALSE(c.compute_blocks);
    EXPECT_FALSE(c.comm_blocks);
    EXPECT_EQ(c.comm_mode, "");  // the variant's first
    EXPECT_EQ(resolve_run(c, b1()).request.comm_mode, "mesh");
    EXPECT_FALSE(c.timing_only);
    EXPECT_EQ(cl.outputs.out_dir, "out");
    EXPECT_EQ(validation_error({}), "");
}

TEST(HostOptions, EveryFlagParses) {
    const std::string dir = std::filesystem::temp_directory_path().string();
    const std::vector<std::string> args = {"-r", "sim", "-v", "Ascend910B3", "-n", "4", "--gm", "4096", "--gk", "2048",
                                           "--gn", "1536", "--base-m", "64", "--base-n", "128", "--compute-blocks",
                                           "32", "--comm-blocks", "24", "--comm-mode", "ring", "--json", "r.json",
                                           "--trace", "t.json", "--out-dir", "o", "--write-inputs", "--input-dir",
                                           dir, "--quiet"};
    const CommandLine cl = parse(args);
    const RunRequest& c = cl.run;
    EXPECT_EQ(c.soc, "Ascend910B3");
    EXPECT_EQ(c.ranks, 4);
    EXPECT_EQ(c.m, 4096);
    EXPECT_EQ(c.k, 2048);
    EXPECT_EQ(c.n, 1536);
    EXPECT_EQ(c.base_m, 64);
    EXPECT_EQ(c.base_n, 128);
    EXPECT_EQ(c.compute_blocks, 32);
    EXPECT_EQ(c.comm_blocks, 24);
    EXPECT_EQ(c.comm_mode, "ring");
    EXPECT_EQ(cl.json_file, "r.json");
    EXPECT_EQ(cl.outputs.trace_file, "t.json");
    EXPECT_EQ(cl.outputs.out_dir, "o");
    EXPECT_TRUE(cl.outputs.write_inputs);
    EXPECT_EQ(cl.outputs.input_dir, dir);
    EXPECT_TRUE(cl.quiet);
    const Profile b3 = load_profile_by_soc("Ascend910B3", default_profile_dir());
    EXPECT_NO_THROW(check_program_options(cl, resolve_run(c, b3)));
}

TEST(HostOptions, LongFormsAndLeadingZerosAreDecimal) {
    const RunRequest c = parse({"--run-mode=sim", "--n-ranks=8", "--gm=08192", "--soc-version", "Ascend910B2"}).run;
    EXPECT_EQ(c.ranks, 8);
    EXPECT_EQ(c.m, 8192);  // not octal
}

TEST(HostOptions, LargeTimingOnlyRunIsAccepted) {
    EXPECT_EQ(validation_error({"-n", "8", "--gm", "16384", "--gk", "4096", "--gn", "4096", "--timing-only"}), "");
    EXPECT_EQ(validation_error({"-n", "384", "--gm", "49152", "--gk", "4096", "--gn", "4096", "--timing-only"}), "");
}

TEST(HostOptions, ProfileDefaultsFillBlockCounts) {
    const Profile& p = b1();
    const RunRequest c = with_defaults(parse({}).run, p);
    EXPECT_EQ(c.compute_blocks, p.chip.aic_cores);
    EXPECT_EQ(c.comm_blocks, p.chip.aiv_cores);
    const RunRequest d = with_defaults(parse({"--compute-blocks", "7"}).run, p);
    EXPECT_EQ(d.compute_blocks, 7);  // an explicit count is kept
}

TEST(HostOptions, HelpExitsZeroAndDescribesEveryFlagWithDefaults) {
    try {
        parse({"--help"});
        FAIL() << "--help must throw CLI::CallForHelp";
    } catch (const CLI::Error& e) {
        std::ostringstream out, err;
        EXPECT_EQ(report_cli_error(e, out, err), 0);
        EXPECT_TRUE(err.str().empty());
        expect_contains(out.str(), {"--run-mode", "--soc-version", "--profile", "--n-ranks", "--gm", "--gk", "--gn",
                                    "--base-m", "--base-n", "--compute-blocks", "--comm-blocks", "--comm-mode",
                                    "--timing-only", "--json", "--trace", "--out-dir", "--write-inputs",
                                    "--input-dir", "--quiet", "2048", "Ascend910B1", "waves"});
    }
}

// --- bad command lines (CLI11) ---

TEST(HostOptions, UnknownFlagIsOneLineNonZero) {
    const auto f = cli_error({"--bogus", "3"});
    EXPECT_EQ(f.exit_code, 2);
    expect_one_line(f.message);
    expect_contains(f.message, {"--bogus", "--help"});
}

TEST(HostOptions, MalformedNumbersAreRejected) {
    for (const std::string bad : {"abc", "12abc", "1e3", "2.5", "0x10", "1,000"}) {
        const auto f = cli_error({"--gm", bad});
        EXPECT_EQ(f.exit_code, 2) << bad;
        expect_one_line(f.message);
        expect_contains(f.message, {"--gm", bad, "not a whole decimal number"});
    }
}

// A knob with words (moe_ffn's --routing) takes them besides integers; a word may set another
// knob too (zipf:S sets --zipf-s-pct), and a wrong one is refused listing the words.
TEST(HostOptions, KnobWordsSetTheirKnobs) {
    const CommandLine zipf = parse({"--op", "moe_ffn", "--routing", "zipf:1.5"});
    EXPECT_EQ(zipf.run.knobs.at("routing"), 2);
    EXPECT_EQ(zipf.run.knobs.at("zipf_s_pct"), 150);
    EXPECT_EQ(parse({"--op", "moe_ffn", "--routing", "Uniform"}).run.knobs.at("routing"), 1);
    EXPECT_EQ(parse({"--op", "moe_ffn", "--routing", "round_robin"}).run.knobs.at("routing"), 0);
    EXPECT_EQ(parse({"--op", "moe_ffn", "--routing", "2"}).run.knobs.at("routing"), 2);
    // An explicit --zipf-s-pct wins over the word's S.
    EXPECT_EQ(parse({"--op", "moe_ffn", "--routing", "zipf:1.5", "--zipf-s-pct", "80"}).run.knobs.at("zipf_s_pct"), 80);
    for (const std::string bad : {"zipf:0", "zipf:-1", "zipf:", "zipf:x", "skewed"}) {
        const auto f = cli_error({"--op", "moe_ffn", "--routing", bad});
        EXPECT_EQ(f.exit_code, 2) << bad;
        expect_one_line(f.message);
        expect_contains(f.message, {"--routing", bad, "round_robin, uniform, zipf or zipf:S"});
    }
    // A knob without words takes integers only.
    expect_contains(cli_error({"--chunk-tiles", "many"}).message, {"--chunk-tiles", "'many' is not a whole decimal number"});
}

TEST(HostOptions, NumberOutOfIntRange) {
    const auto f = cli_error({"--gk", "99999999999"});
    EXPECT_EQ(f.exit_code, 2);
    expect_contains(f.message, {"--gk", "99999999999", "out of range", "2147483647"});
}

TEST(HostOptions, UnknownRunModeAndCommMode) {
    expect_contains(cli_error({"-r", "gpu"}).message, {"--run-mode", "gpu", "sim"});
    expect_contains(cli_error({"--comm-mode", "star"}).message, {"--comm-mode", "star", "mesh", "ring"});
}

TEST(HostOptions, MissingValue) {
    const auto f = cli_error({"-n"});
    EXPECT_EQ(f.exit_code, 2);
    expect_contains(f.message, {"--n-ranks"});
}

TEST(HostOptions, MissingProfileFile) {
    expect_contains(cli_error({"--profile", "/no/such/profile.toml"}).message, {"--profile", "/no/such/profile.toml"});
}

TEST(HostOptions, NpuRunModeSaysThereIsNoNpu) {
    try {
        parse({"-r", "npu", "-n", "2"});
        FAIL() << "-r npu must be refused";
    } catch (const SimError& e) {
        EXPECT_STREQ(e.what(),
                     "-r npu: no Ascend NPU is present on this machine; Tandem simulates one: use -r sim");
    }
}

// --- bad shapes and combinations (validate_run_config) ---

TEST(HostOptions, TooFewRanks) {
    const std::string e = validation_error({"-n", "1"});
    expect_one_line(e);
    expect_contains(e, {"-n 1", "not a collective", "nearest valid: 2"});
}

TEST(HostOptions, TooManyRanksFunctionalSuggestsTimingOnly) {
    expect_contains(validation_error({"-n", "64", "--gm", "8192"}), {"-n 64", "nearest valid: 32", "--timing-only"});
}

TEST(HostOptions, TooManyRanksTimingOnly) {
    expect_contains(validation_error({"-n", "500", "--timing-only"}), {"-n 500", "384", "nearest valid: 384"});
}

TEST(HostOptions, MNotAMultipleOfRanksTimesBaseM) {
    const std::string e = validation_error({"--gm", "1000"});
    EXPECT_EQ(e, "--gm 1000: M must be a multiple of n*base-m = 256 (each rank's slice is whole 128-row groups); "
                 "nearest valid: 1024");
    EXPECT_EQ(validation_error({"-n", "4", "--gm", "2176"}),
              "--gm 2176: M must be a multiple of n*base-m = 512 (each rank's slice is whole 128-row groups); "
              "nearest valid: 2048");
}

TEST(HostOptions, KAndNNotMultiplesOfBaseN) {
    expect_contains(validation_error({"--gk", "1000"}), {"--gk 1000", "base-n = 256", "nearest valid: 1024"});
    expect_contains(validation_error({"--gn", "1300"}), {"--gn 1300", "base-n = 256", "nearest valid: 1280"});
}

TEST(HostOptions, NonPositiveSizes) {
    expect_contains(validation_error({"--gm", "0"}), {"--gm 0", "positive", "nearest valid: 256"});
    expect_contains(validation_error({"--gk", "-5"}), {"--gk -5", "positive"});
    expect_contains(validation_error({"--base-m", "0"}), {"--base-m 0", "nearest valid: 16"});
    // A variant that pads its tensors has no rule of its own on them: the host's, before any simulation.
    for (const char* flag : {"--gm", "--gk", "--gn"}) {
        const std::string e = validation_error({"--op", "matmul_all_reduce", "-n", "4", flag, "-1"});
        expect_contains(e, {std::string(flag) + " -1", "must be positive (at least 1)"});
        expect_one_line(e);
    }
}

TEST(HostOptions, BaseNNotDivisibleByFour) {
    expect_contains(validation_error({"--base-n", "250"}), {"--base-n 250", "multiple of 4", "nearest valid: 256"});
}

TEST(HostOptions, TileNotAMultipleOfTheCubeFractal) {
    expect_contains(validation_error({"--base-n", "200", "--gk", "2000", "--gn", "1000"}),
                    {"--base-n 200", "cube fractal 16", "nearest valid: 208"});
    expect_contains(validation_error({"--base-m", "100"}), {"--base-m 100", "cube fractal 16", "nearest valid: 96"});
}

TEST(HostOptions, TileMustFitL0C) {
    const std::string e = validation_error({"--base-m", "256", "--gm", "4096"});
    expect_one_line(e);
    expect_contains(e, {"--base-m 256 --base-n 256", "L0C", "262144", "131072", "nearest valid: --base-m 128"});
}

TEST(HostOptions, TileMustFitL0B) {
    expect_contains(validation_error({"--base-m", "64", "--base-n", "512", "--gk", "2048", "--gn", "1024"}),
                    {"L0B", "nearest valid: --base-n 256"});
}

TEST(HostOptions, BlockCountsOutOfRange) {
    expect_contains(validation_error({"--compute-blocks", "0"}),
                    {"--compute-blocks 0", "1..4096", "waves", "nearest valid: 1"});
    expect_contains(validation_error({"--comm-blocks", "5000"}), {"--comm-blocks 5000", "nearest valid: 4096"});
    // More blocks than cores is fine: they run in waves.
    EXPECT_EQ(validation_error({"--compute-blocks", "100", "--comm-blocks", "1"}), "");
}

TEST(HostOptions, InputDirExcludesTimingOnly) {
    const std::string dir = std::filesystem::temp_directory_path().string();
    expect_contains(validation_error({"--input-dir", dir, "--timing-only"}), {"--input-dir", "--timing-only"});
    expect_contains(validation_error({"--write-inputs", "--timing-only"}), {"--write-inputs", "--timing-only"});
}

TEST(HostOptions, FunctionalRunTooLargeForHostMemory) {
    const std::vector<std::string> big = {"-n", "32", "--gm", "65536", "--gk", "8192", "--gn", "8192"};
    const std::string e = validation_error(big);
    expect_one_line(e);
    expect_contains(e, {"-n 32 --gm 65536 --gk 8192 --gn 8192", "GiB", "16.0 GiB limit", "--timing-only",
                        "nearest valid: --gm"});
    // The suggested M fits.
    const std::string suggested = e.substr(e.rfind("--gm ") + 5);
    EXPECT_EQ(validation_error({"-n", "32", "--gm", suggested, "--gk", "8192", "--gn", "8192"}), "") << suggested;
    // The same shape timing-only is fine.
    std::vector<std::string> timing = big;
    timing.push_back("--timing-only");
    EXPECT_EQ(validation_error(timing), "");
}

TEST(HostOptions, ShapeLargerThanTheChipsHbm) {
    const std::string e =
        validation_error({"-n", "8", "--gm", "1048576", "--gk", "16384", "--gn", "16384", "--timing-only"});
    expect_contains(e, {"HBM", "64.0 GiB", "Ascend910B1", "nearest valid: --gm"});
}

TEST(HostOptions, OutputDirectoryMustExist) {
    expect_contains(validation_error({"--json", "/no/such/dir/r.json"}),
                    {"--json /no/such/dir/r.json", "'/no/such/dir' does not exist"});
    expect_contains(validation_error({"--trace", "/no/such/dir/t.json"}), {"--trace"});
    expect_contains(validation_error({"--out-dir", "/dev/null"}), {"--out-dir /dev/null", "not a directory"});
}

// A place that exists but takes no file (a read-only file system: even root cannot write there)
// is refused before the run, not after it.
TEST(HostOptions, OutputPlacesMustBeWritable) {
    expect_contains(validation_error({"--out-dir", "/proc/tandem_out"}), {"--out-dir /proc/tandem_out", "cannot write there"});
    expect_contains(validation_error({"--json", "/proc/r.json"}), {"--json /proc/r.json", "cannot write in '/proc'"});
    expect_contains(validation_error({"--trace", "/proc/t.json", "--timing-only"}), {"--trace /proc/t.json"});
    EXPECT_EQ(validation_error({"--json", "/dev/null", "--timing-only"}), "");  // a device is written in place
}

TEST(HostOptions, HugeValuesGiveMessagesNotOverflow) {
    expect_contains(validation_error({"--base-m", "2147483632", "--base-n", "2147483632"}),
                    {"L0C", "nearest valid: --base-m"});
    expect_contains(validation_error({"-n", "2", "--gm", "2147483392", "--gk", "2147483392", "--gn", "2147483392",
                                      "--timing-only", "--base-m", "128", "--base-n", "256"}),
                    {"HBM", "nearest valid"});
}

TEST(HostOptions, SuggestedValuesAreValid) {
    // Every "nearest valid: <number>" for a single flag must itself pass validation.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--gm", "1000"}, {"--gm", "1100"}, {"--gk", "1000"}, {"--gn", "1300"}, {"--gm", "0"}, {"--gk", "77"}};
    for (const auto& [flag, value] : cases) {
        const std::string e = validation_error({flag, value});
        ASSERT_NE(e, "") << flag << " " << value;
        const std::string suggested = e.substr(e.find("nearest valid: ") + 15);
        EXPECT_EQ(validation_error({flag, suggested.substr(0, suggested.find(' '))}), "") << e;
    }
}

TEST(HostOptions, SuggestedValuesOfOpsAreValid) {
    // The same for refusals that depend on the op, the variant or the int range.
    struct Case {
        std::vector<std::string> base;
        std::string flag, value;
    };
    const std::vector<std::string> moe = {"--op", "moe_ffn", "-n", "2", "--gm", "16", "--gn", "256", "--timing-only"};
    const std::vector<std::string> moe_no_m = {"--op", "moe_ffn", "-n", "2", "--gk", "256", "--gn", "256", "--timing-only"};
    const std::vector<std::string> staged = {"--op", "all_gather_matmul", "--variant", "staged", "-n", "2", "--gm", "256",
                                             "--gk", "512", "--gn", "256", "--timing-only"};
    const std::vector<Case> cases = {{moe_no_m, "--comm-blocks", "2"},   {moe, "--compute-blocks", "1"}, {moe_no_m, "--gm", "0"},
                                     {moe, "--gk", "13312"},       {moe, "--gk", "20480"},         {staged, "--stages", "1000"}};
    for (const Case& c : cases) {
        std::vector<std::string> args = c.base;
        args.insert(args.end(), {c.flag, c.value});
        const std::string e = validation_error(args);
        ASSERT_NE(e.find("nearest valid: "), std::string::npos) << c.flag << " " << c.value << ": " << e;
        const std::string suggested = e.substr(e.find("nearest valid: ") + 15);
        std::vector<std::string> fixed = c.base;
        fixed.insert(fixed.end(), {c.flag, suggested.substr(0, suggested.find(' '))});
        EXPECT_EQ(validation_error(fixed), "") << e;
    }
    // Past the largest int, the multiple below: one rule at a time (that size then meets the HBM's).
    expect_contains(validation_error({"--timing-only", "--gm", "2147483647"}), {"nearest valid: 2147483392"});
    expect_contains(validation_error({"--timing-only", "--gm", "2147483392"}), {"HBM"});
}

}  // namespace host_options_test
}  // namespace tandem::host
