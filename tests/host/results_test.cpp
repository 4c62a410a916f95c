// Metrics, results JSON and summary (host/run/results.hpp): docs/RESULTS.md's formulas on
// hand-computed values, every contract key present, atomic JSON writes.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "host/io/atomic_file.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/results.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace results_test {

namespace fs = std::filesystem;

const Profile& b1() {
    static const Profile p = test::b1_profile();
    return p;
}

// The seed's default run: 2 ranks, 2048 x 2048 x 1024, 128 x 256 tiles, 24/48 blocks, mesh.
RunIdentity seed_identity(bool timing_only = true) {
    RunRequest r;
    r.timing_only = timing_only;
    return make_identity(resolve_run(r, b1()));
}

// compute-only 200, comm 100 then compute 250 (sequential 350), pipelined 300.
ViewTimes sample_times() { return {200.0, 100.0, 250.0, 300.0}; }

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tandem_results_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(Results, MetricsFollowSpecFormulas) {
    const RunMetrics m = compute_metrics(seed_identity(), sample_times());
    EXPECT_DOUBLE_EQ(m.sequential_us, 350.0);
    EXPECT_DOUBLE_EQ(m.speedup, 350.0 / 300.0);
    EXPECT_DOUBLE_EQ(m.time_saved_us, 50.0);
    EXPECT_DOUBLE_EQ(m.time_saved_pct, 50.0 / 350.0 * 100.0);
    EXPECT_DOUBLE_EQ(m.overlap_eff_pct, 50.0);            // 50 of min(100, 250) hidden
    EXPECT_DOUBLE_EQ(m.exposed_comm_us, 100.0);           // 300 - 200
    EXPECT_DOUBLE_EQ(m.ideal_bound_us, 200.0);            // max(100, 200)
    EXPECT_DOUBLE_EQ(m.flops, 8589934592.0);              // 2 * 2048 * 2048 * 1024
    EXPECT_NEAR(m.tflops_per_rank, 8589934592.0 / 300e-6 / 1e12, 1e-9);  // 28.633 TFLOPS
    EXPECT_NEAR(m.tflops_compute_only, 8589934592.0 / 200e-6 / 1e12, 1e-9);
    EXPECT_NEAR(m.tflops_sequential, 8589934592.0 / 350e-6 / 1e12, 1e-9);
    // Each rank receives (M/n)*K*2*(n-1) = 1024 * 2048 * 2 = 4 MiB.
    EXPECT_DOUBLE_EQ(m.comm_payload_bytes, 4194304.0);
    EXPECT_NEAR(m.comm_payload_gib_s, 4194304.0 / 300e-6 / 1073741824.0, 1e-9);  // 13.02 GiB/s
    EXPECT_NEAR(m.comm_payload_gb_s, 4194304.0 / 300e-6 / 1e9, 1e-9);           // 13.98 GB/s
    EXPECT_GT(m.comm_payload_gb_s, m.comm_payload_gib_s);
    EXPECT_NEAR(m.seq_comm_gib_s, 4194304.0 / 100e-6 / 1073741824.0, 1e-9);
}

TEST(Results, AllGatherBytesScaleWithPeers) {
    RunRequest cfg;
    cfg.timing_only = true;
    EXPECT_DOUBLE_EQ(make_identity(resolve_run(cfg, b1())).comm_payload_bytes, 1024.0 * 2048 * 2);  // the seed's default
    cfg.ranks = 8;
    cfg.m = 16384;
    cfg.k = 4096;
    // (16384/8) * 4096 * 2 * 7
    const RunIdentity id = make_identity(resolve_run(cfg, b1()));
    EXPECT_DOUBLE_EQ(compute_metrics(id, sample_times()).comm_payload_bytes, 2048.0 * 4096 * 2 * 7);
}

TEST(Results, OverlapIsFlooredAtZero) {
    // Pipelined slower than sequential: negative saving, overlap 0, speedup below 1.
    const RunMetrics m = compute_metrics(seed_identity(), {200.0, 100.0, 250.0, 400.0});
    EXPECT_DOUBLE_EQ(m.overlap_eff_pct, 0.0);
    EXPECT_DOUBLE_EQ(m.time_saved_us, -50.0);
    EXPECT_LT(m.speedup, 1.0);
}

TEST(Results, OverlapIsZeroWhenOnePhaseTakesNoTime) {
    EXPECT_DOUBLE_EQ(compute_metrics(seed_identity(), {200.0, 0.0, 250.0, 200.0}).overlap_eff_pct, 0.0);
    EXPECT_DOUBLE_EQ(compute_metrics(seed_identity(), {200.0, 100.0, 0.0, 50.0}).overlap_eff_pct, 0.0);
}

TEST(Results, FullOverlapIsHundredPercent) {
    // Pipelined = the longer phase: all of the shorter one hidden.
    EXPECT_DOUBLE_EQ(compute_metrics(seed_identity(), {240.0, 100.0, 250.0, 250.0}).overlap_eff_pct, 100.0);
}

TEST(Results, ZeroTimesGiveZeroRatesNotInfinity) {
    const RunMetrics m = compute_metrics(seed_identity(), {0.0, 0.0, 0.0, 0.0});
    EXPECT_EQ(m.speedup, 0.0);
    EXPECT_EQ(m.tflops_per_rank, 0.0);
    EXPECT_EQ(m.comm_payload_gib_s, 0.0);
    EXPECT_EQ(m.time_saved_pct, 0.0);
}

TEST(Results, JsonHasEveryContractKey) {
    const RunResults r{seed_identity(false), sample_times(), Verification::Passed, nlohmann::json::object()};
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(contract_keys().size(), 22u);
    for (const std::string& key : contract_keys()) EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["soc"], "Ascend910B1");
    EXPECT_EQ(j["ranks"], 2);
    EXPECT_EQ(j["m"], 2048);
    EXPECT_EQ(j["comm_mode"], "mesh");
    EXPECT_EQ(j["data_mode"], "functional");
    EXPECT_EQ(j["verification"], "passed");
    EXPECT_DOUBLE_EQ(j["sequential_us"].get<double>(), 350.0);
    EXPECT_DOUBLE_EQ(j["overlap_eff_pct"].get<double>(), 50.0);
    EXPECT_DOUBLE_EQ(j["exposed_comm_us"].get<double>(), 100.0);
    // extras
    for (const char* key : {"ideal_bound_us", "time_saved_us", "time_saved_pct", "allgather_gb_s", "tflops_compute_only",
                            "tflops_sequential", "tflops_pipelined"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    // The op's identity keys (docs/RESULTS.md): the op, its variant and dtypes, under the parameter schema's names.
    EXPECT_EQ(j["op"], "allgather_gemm");
    EXPECT_EQ(j["variant"], "streaming");
    EXPECT_EQ(j["dtype"], "fp16");
    EXPECT_EQ(j["out_dtype"], "fp32");
    EXPECT_EQ(j["bias"], "none");
    EXPECT_EQ(j["comm_kind"], "allgather");
}

// Every op's collective figures have neutral names; the seed's names stay as aliases with the
// same values (allgather_gib_s is a contract key).
TEST(Results, CommFiguresHaveNeutralNamesAndTheSeedsAsAliases) {
    const nlohmann::json j = to_json({seed_identity(), sample_times(), Verification::Skipped, nlohmann::json::object()});
    const RunMetrics m = compute_metrics(seed_identity(), sample_times());
    EXPECT_EQ(j.at("comm_payload_bytes"), m.comm_payload_bytes);
    EXPECT_EQ(j.at("comm_payload_gib_s"), m.comm_payload_gib_s);
    EXPECT_EQ(j.at("comm_payload_gb_s"), m.comm_payload_gb_s);
    EXPECT_EQ(j.at("allgather_bytes"), j.at("comm_payload_bytes"));
    EXPECT_EQ(j.at("allgather_gib_s"), j.at("comm_payload_gib_s"));
    EXPECT_EQ(j.at("allgather_gb_s"), j.at("comm_payload_gb_s"));
    EXPECT_GT(m.comm_payload_gib_s, 0.0);
}

TEST(Results, VerificationNames) {
    EXPECT_STREQ(verification_name(Verification::Passed), "passed");
    EXPECT_STREQ(verification_name(Verification::Failed), "failed");
    EXPECT_STREQ(verification_name(Verification::Skipped), "skipped");
}

TEST(Results, ExtrasAreMergedAndMayNotOverrideContractKeys) {
    RunResults r{seed_identity(), sample_times(), Verification::Skipped, {{"chunk_size", 4}, {"num_chunks", 8}}};
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["chunk_size"], 4);
    EXPECT_EQ(j["num_chunks"], 8);
    r.extras = {{"speedup", 99}};
    EXPECT_THROW(to_json(r), SimError);
}

TEST(Results, IdentityIsTheResolvedRun) {
    RunRequest cfg;
    cfg.soc = "Ascend910B3";
    cfg.compute_blocks = 20;
    cfg.timing_only = true;
    cfg.comm_mode = "ring";
    const RunIdentity id = make_identity(resolve_run(cfg, load_profile_by_soc("Ascend910B3", default_profile_dir())));
    EXPECT_EQ(id.run.soc, "Ascend910B3");
    EXPECT_EQ(id.run.compute_blocks, 20);
    EXPECT_EQ(id.run.comm_blocks, 40);  // the profile's AIV count
    EXPECT_EQ(id.run.comm_mode, "ring");
    EXPECT_EQ(id.run.variant, "streaming");  // the op's first
    const nlohmann::json j = to_json({id, sample_times(), Verification::Skipped, nlohmann::json::object()});
    EXPECT_EQ(j["data_mode"], "timing-only");
    EXPECT_EQ(j["comm_blocks"], 40);
    EXPECT_EQ(j["soc"], "Ascend910B3");
}

TEST(Results, AtomicJsonWriteLeavesNoTempFile) {
    const fs::path dir = fresh_dir("atomic");
    const fs::path path = dir / "r.json";
    const nlohmann::json j = to_json({seed_identity(), sample_times(), Verification::Skipped, nlohmann::json::object()});
    write_json_atomic(path.string(), j);
    write_json_atomic(path.string(), j);  // overwriting works too
    std::ifstream in(path);
    EXPECT_EQ(nlohmann::json::parse(in), j);
    int files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        ++files;
        EXPECT_EQ(entry.path().filename(), "r.json");
    }
    EXPECT_EQ(files, 1);
    EXPECT_FALSE(fs::exists(temp_path_for(path)));
    fs::remove_all(dir);
}

TEST(Results, JsonWriteErrorNamesThePath) {
    try {
        write_json_atomic("/no/such/dir/r.json", nlohmann::json::object());
        FAIL() << "expected a SimError";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("/no/such/dir/r.json"), std::string::npos) << e.what();
    }
}

TEST(Results, SummaryLooksLikeTheSeeds) {
    const RunResults r{seed_identity(), sample_times(), Verification::Skipped, nlohmann::json::object()};
    const std::string s = format_summary(r);
    EXPECT_EQ(s.rfind("[SUCCESS] AllGather GEMM (Tandem sim, Ascend910B1, 2 ranks, timing-only)\n", 0), 0u) << s;
    for (const char* label : {"Compute-only:", "Sequential (comm + compute):", "Pipelined:", "Speedup:", "Time saved:",
                              "Overlap eff:", "Exposed comm:", "Ideal bound:", "TFLOPS (per rank):",
                              "AllGather bandwidth:", "GiB/s", "GB/s", "300.000 us (0.300 ms)", "1.167x", "50.0%",
                              "28.63"}) {
        EXPECT_NE(s.find(label), std::string::npos) << label << " not in:\n" << s;
    }
    // Values start in one column.
    const auto col = [&](const std::string& label) {
        const auto line = s.find(label);
        const auto value = s.find_first_not_of(' ', line + label.size());
        return value - s.rfind('\n', line);
    };
    EXPECT_EQ(col("Compute-only:"), col("Sequential (comm + compute):"));
    EXPECT_EQ(col("Speedup:"), col("AllGather bandwidth:"));
}

TEST(Results, SummarySaysWhyOverlapEfficiencyPasses100Percent) {
    // 150 us saved of min(comm 100, compute 250): the variant's comm beat the baseline collective.
    const RunResults over{seed_identity(), ViewTimes{200.0, 100.0, 250.0, 200.0}, Verification::Skipped,
                          nlohmann::json::object()};
    const std::string s = format_summary(over);
    EXPECT_NE(s.find("150.0% (of min(comm, compute) hidden; over 100%: the variant's comm costs less than the "
                     "sequential baseline's collective)"),
              std::string::npos)
        << s;
    const RunResults usual{seed_identity(), sample_times(), Verification::Skipped, nlohmann::json::object()};
    EXPECT_NE(format_summary(usual).find("50.0% (of min(comm, compute) hidden)\n"), std::string::npos);
}

TEST(Results, SummaryOfFailedVerification) {
    const RunResults r{seed_identity(false), sample_times(), Verification::Failed, nlohmann::json::object()};
    EXPECT_EQ(format_summary(r).rfind("[FAILED] AllGather GEMM (Tandem sim, Ascend910B1, 2 ranks, functional, "
                                      "verification FAILED)",
                                      0),
              0u);
}

// Another op's summary: its name and variant, its collective's rate under a neutral label.
TEST(Results, OtherOpsSummaryNamesTheOpAndItsCollective) {
    RunRequest r;
    r.op = "matmul_all_reduce";
    r.timing_only = true;
    r.m = r.k = r.n = 1024;
    const RunResults res{make_identity(resolve_run(r, b1())), sample_times(), Verification::Skipped,
                         nlohmann::json::object()};
    const std::string s = format_summary(res);
    EXPECT_EQ(s.rfind("[SUCCESS] matmul_all_reduce ", 0), 0u) << s;
    EXPECT_NE(s.find("Comm bandwidth (allreduce):"), std::string::npos) << s;
    EXPECT_EQ(s.find("AllGather"), std::string::npos) << s;
}

}  // namespace results_test
}  // namespace tandem::host
