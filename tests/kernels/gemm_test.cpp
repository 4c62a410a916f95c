// --op gemm: the published kernel's arithmetic (kernels/gemm/README.md), its instruction stream
// and overlaps on the simulator's log, tiled's verification on ragged shapes with bias, bf16 and
// stream-K over uneven block counts (tests/kernels/op_conformance_test.cpp checks what every op must
// do), the views of an op
// without communication (equal times, honest contract values, the summary's wording),
// functional == timing-only, byte-identical repeats, the published sizes, 24 blocks on a 20-core
// profile, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "kernels/gemm/perf_tiling.hpp"
#include "sim/isa/isa.hpp"
#include "sim/machine/cluster.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace gemm_test {

using kernels::gemm::PerfTiling;

TEST(GemmPerfTiling, ThePublishedBuildAt6144) {
    const PerfTiling t(6144, 6144, 6144);
    EXPECT_EQ(t.single_core_m(), 1536);
    EXPECT_EQ(t.single_core_n(), 1024);
    EXPECT_EQ(t.single_core_k(), 6144);
    EXPECT_EQ(t.m_loop(), 12);
    EXPECT_EQ(t.n_loop(), 4);
    EXPECT_EQ(t.k_loop(), 96);
    EXPECT_EQ(t.tiles_per_block(), 48);
    EXPECT_EQ(t.matmuls_per_block(), 4608);
    EXPECT_EQ(t.panels_per_block(), 1152);  // 1152 A + 1152 B TLOADs
    // The m index varies fastest: blocks 0-3 share n-block 0.
    EXPECT_EQ(t.m_index(3), 3);
    EXPECT_EQ(t.n_index(3), 0);
    EXPECT_EQ(t.m_index(5), 1);
    EXPECT_EQ(t.n_index(5), 1);
    EXPECT_EQ(t.m_index(23), 3);
    EXPECT_EQ(t.n_index(23), 5);
}

TEST(GemmPerfTiling, TheOtherSizesKeepTheGridAndTile) {
    struct Row {
        int size, scm, scn, mloop, nloop, kloop;
    };
    for (const Row r : {Row{1536, 384, 256, 3, 1, 24}, Row{3072, 768, 512, 6, 2, 48}, Row{7680, 1920, 1280, 15, 5, 120}}) {
        const PerfTiling t(r.size, r.size, r.size);
        EXPECT_EQ(t.single_core_m(), r.scm) << r.size;
        EXPECT_EQ(t.single_core_n(), r.scn) << r.size;
        EXPECT_EQ(t.m_loop(), r.mloop) << r.size;
        EXPECT_EQ(t.n_loop(), r.nloop) << r.size;
        EXPECT_EQ(t.k_loop(), r.kloop) << r.size;
        EXPECT_EQ(t.k_loop() / PerfTiling::kStepK, r.kloop / 4) << r.size;  // L1 panels per tile
    }
}

// What the published kernel's fixed MTE2 -> MTE1 ids need: a flag set twice before it is waited
// on counts twice (a FIFO of set times), the n-th wait released by the n-th set.
Task two_sets_then_two_waits(BlockCtx& blk, GmTensor src) {
    Tile* panel[2] = {&blk.alloc_tile(MemKind::L1, 128, 256, DType::F16, "p0"),
                      &blk.alloc_tile(MemKind::L1, 128, 256, DType::F16, "p1")};
    Tile* slice[2] = {&blk.alloc_tile(MemKind::L0A, 128, 64, DType::F16, "s0"),
                      &blk.alloc_tile(MemKind::L0A, 128, 64, DType::F16, "s1")};
    for (int i = 0; i < 2; ++i) {
        co_await TLOAD(*panel[i], src);
        set_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
    }
    for (int i = 0; i < 2; ++i) {
        wait_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
        TEXTRACT(*slice[i], *panel[i], 0, 0);
    }
}

TEST(GemmPerformance, AFlagSetTwiceBeforeItsWaitCountsTwice) {
    const Profile p = test::b1_profile();
    Runtime rt(p, ClusterOptions{1, DataMode::TimingOnly, true, false});
    const GmTensor src(rt.cluster().chip(0).gm.allocate("src", 128 * 256 * 2), 0, 128, 256, 256, DType::F16);
    test::run_one_kernel(rt, CoreType::AIC, 1, [src](BlockCtx& blk) { return two_sets_then_two_waits(blk, src); });
    std::vector<InstrRecord> loads, extracts;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op == Opcode::TLOAD) loads.push_back(r);
        if (r.op == Opcode::TEXTRACT) extracts.push_back(r);
    }
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(extracts.size(), 2u);
    EXPECT_GE(extracts[0].start, loads[0].end);
    EXPECT_LT(extracts[0].start, loads[1].end);  // released by the first set, not the second
    EXPECT_GE(extracts[1].start, loads[1].end);  // the second wait waited for the second set
}

RunRequest config(const std::string& variant, int ranks, int m, int k, int n, bool timing_only = false) {
    RunRequest c;
    c.op = "gemm";
    c.variant = variant;
    c.ranks = ranks;
    c.m = m;
    c.k = k;
    c.n = n;
    c.timing_only = timing_only;
    return c;
}

// The results' `kernels` entry of the pipelined view (gemm has one launch per view).
nlohmann::json pipelined_kernel(const ProgramOutput& out) {
    const nlohmann::json j = to_json(out.results);
    for (const nlohmann::json& k : j.at("kernels"))
        if (k.at("view") == "pipelined") return k;
    ADD_FAILURE() << "no pipelined kernel in the results";
    return {};
}

bool overlap(const InstrRecord& a, const InstrRecord& b) { return a.start < b.end && b.start < a.end; }

// M=1024 K=512 N=3072: every block has 2 x 2 tiles of 8 K steps (2 L1 panels each).
TEST(GemmPerformance, InstructionsFlagsAndOverlapsAsPublished) {
    const RunRequest cfg = config("pto_performance", 1, 1024, 512, 3072, true);
    RunOutputs logged;
    logged.record_log = true;
    const ProgramOutput out = test::run_op(cfg, test::b1_profile(), logged);
    const PerfTiling t(1024, 512, 3072);
    ASSERT_EQ(t.tiles_per_block(), 4);
    ASSERT_EQ(t.panels_per_block(), 8);
    std::map<int, std::vector<InstrRecord>> by_core;
    for (const InstrRecord& r : out.bench.pipelined_log) {
        ASSERT_EQ(r.core_type, CoreType::AIC);
        by_core[r.core].push_back(r);
    }
    ASSERT_EQ(by_core.size(), 24u);  // 24 blocks, one per AIC core of the profile
    constexpr std::int64_t kAPanelBytes = 128 * 256 * 2;
    constexpr std::int64_t kBPanelBytes = 256 * 256 * 2;
    constexpr std::int64_t kASliceBytes = 128 * 64 * 2;
    int a_extract_during_its_b_load = 0;
    int loads_during_a_store = 0;
    for (auto& [core, log] : by_core) {
        std::sort(log.begin(), log.end(), [](const InstrRecord& a, const InstrRecord& b) { return a.start < b.start; });
        std::map<Opcode, int> count;
        std::vector<InstrRecord> a_loads, b_loads, a_extracts, b_extracts, cube, stores;
        for (const InstrRecord& r : log) {
            ++count[r.op];
            if (r.op == Opcode::TLOAD) (r.bytes == kAPanelBytes ? a_loads : b_loads).push_back(r);
            if (r.op == Opcode::TEXTRACT) (r.bytes == kASliceBytes ? a_extracts : b_extracts).push_back(r);
            if (r.op == Opcode::TMATMUL || r.op == Opcode::TMATMUL_ACC) cube.push_back(r);
            if (r.op == Opcode::TSTORE) stores.push_back(r);
        }
        EXPECT_EQ(a_loads.size(), 8u) << "core " << core;
        EXPECT_EQ(b_loads.size(), 8u) << "core " << core;
        for (const InstrRecord& b : b_loads) EXPECT_EQ(b.bytes, kBPanelBytes);
        EXPECT_EQ(a_extracts.size(), 32u) << "core " << core;
        EXPECT_EQ(b_extracts.size(), 32u) << "core " << core;
        EXPECT_EQ(count[Opcode::TMATMUL], 4) << "core " << core;  // the first K step of each tile
        EXPECT_EQ(count[Opcode::TMATMUL_ACC], 28) << "core " << core;
        EXPECT_EQ(count[Opcode::TSTORE], 4) << "core " << core;
        EXPECT_EQ(count[Opcode::PIPE_BARRIER], 0) << "core " << core;
        // Prologue 4, per panel 3 (A landed, B landed, slot released), per K step 2, per tile 2:
        // 4 + 24 + 64 + 8 sets, and as many waits (the epilogue drains the 4 pre-armed tokens).
        EXPECT_EQ(count[Opcode::SET_FLAG], 100) << "core " << core;
        EXPECT_EQ(count[Opcode::WAIT_FLAG], 100) << "core " << core;
        for (std::size_t p = 0; p < b_loads.size(); ++p) {
            // A panel before B panel on MTE2; the panel's first A extract waits for A only, its B
            // extract for B.
            EXPECT_LE(a_loads[p].end, b_loads[p].start);
            EXPECT_GE(a_extracts[4 * p].start, a_loads[p].end);
            EXPECT_GE(b_extracts[4 * p].start, b_loads[p].end);
            if (a_extracts[4 * p].start < b_loads[p].end) ++a_extract_during_its_b_load;
        }
        // One accumulator: the cube never runs while a store reads it; MTE2 prefetches meanwhile.
        for (const InstrRecord& s : stores) {
            for (const InstrRecord& c : cube) EXPECT_FALSE(overlap(s, c)) << "core " << core;
            for (const InstrRecord& l : log)
                if (l.op == Opcode::TLOAD && overlap(s, l)) ++loads_during_a_store;
        }
    }
    EXPECT_GT(a_extract_during_its_b_load, 0);
    EXPECT_GT(loads_during_a_store, 0);
}

struct TiledCase {
    int ranks, m, k, n;
    std::string dtype, out_dtype, bias, schedule;
    std::optional<int> compute_blocks;
};

class GemmTiled : public ::testing::TestWithParam<TiledCase> {};

TEST_P(GemmTiled, VerifiesAnyShape) {
    const TiledCase c = GetParam();
    RunRequest cfg = config("tiled", c.ranks, c.m, c.k, c.n);
    cfg.dtype = parse_dtype_text(c.dtype);
    cfg.out_dtype = parse_dtype_text(c.out_dtype);
    cfg.bias = parse_bias_text(c.bias);
    cfg.schedule = c.schedule;
    cfg.compute_blocks = c.compute_blocks;
    const ProgramOutput out = test::run_op(cfg);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmTiled,
    ::testing::Values(TiledCase{1, 300, 200, 500, "fp16", "fp32", "none", "data_parallel", std::nullopt},
                      TiledCase{2, 256, 512, 768, "fp16", "fp32", "n", "data_parallel", std::nullopt},
                      TiledCase{1, 384, 256, 512, "bf16", "bf16", "m", "data_parallel", std::nullopt},
                      TiledCase{1, 640, 512, 1280, "fp16", "fp16", "none", "stream_k", 7},
                      TiledCase{2, 640, 256, 1280, "fp16", "fp32", "n", "hybrid", 4}));

void expect_views_are_the_kernel_alone(const ProgramOutput& out) {
    const ViewTimes& t = out.results.times;
    EXPECT_GT(t.compute_only_us, 0.0);
    EXPECT_EQ(t.seq_comm_us, 0.0);
    EXPECT_EQ(t.seq_compute_us, t.compute_only_us);
    EXPECT_EQ(t.pipelined_us, t.compute_only_us);
    const nlohmann::json j = to_json(out.results);
    EXPECT_EQ(j.at("speedup"), 1.0);
    EXPECT_EQ(j.at("overlap_eff_pct"), 0.0);
    EXPECT_EQ(j.at("exposed_comm_us"), 0.0);
    EXPECT_EQ(j.at("allgather_gib_s"), 0.0);
    EXPECT_EQ(j.at("comm_kind"), "none");
    EXPECT_EQ(j.at("comm_blocks"), 0);
    EXPECT_EQ(j.at("comm_bytes_per_rank"), 0);
    // One launch per view, the same kernel each time: the same device time.
    ASSERT_EQ(j.at("kernels").size(), 3u);
    for (const nlohmann::json& k : j.at("kernels")) {
        EXPECT_EQ(k.at("kernel_us"), j.at("kernels")[0].at("kernel_us"));
        EXPECT_LT(k.at("kernel_us").get<double>(), t.compute_only_us);  // the host's overheads are not in it
    }
}

TEST(GemmViews, WithoutCommunicationEveryViewIsTheKernel) {
    expect_views_are_the_kernel_alone(test::run_op(config("pto_performance", 2, 512, 512, 1536, true)));
    expect_views_are_the_kernel_alone(test::run_op(config("tiled", 1, 300, 200, 500, true)));
}

TEST(GemmViews, TheSummarySaysSoAndShowsThePipes) {
    const ProgramOutput out = test::run_op(config("pto_performance", 1, 512, 512, 1536, true));
    const std::string s = format_summary(out.results);
    for (const char* want : {"no communication: sequential and pipelined are the kernel alone", "Kernel (device):",
                             "GemmPerformance", "TFLOPS", "Pipe utilisation (AIC):", "on each of the 24 AIC cores",
                             "cube (TMATMUL)", "MTE1 (TEXTRACT)", "MTE2 (TLOAD)", "FIXP (TSTORE)"}) {
        EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
    }
    for (const char* absent : {"Speedup", "Overlap eff", "Exposed comm", "bandwidth"}) {
        EXPECT_EQ(s.find(absent), std::string::npos) << absent << "\n" << s;
    }
}

TEST(GemmViews, FunctionalAndTimingOnlyAgreeAndRepeat) {
    const ProgramOutput functional = test::run_op(config("pto_performance", 1, 1024, 512, 3072));
    const ProgramOutput timing = test::run_op(config("pto_performance", 1, 1024, 512, 3072, true));
    const ProgramOutput again = test::run_op(config("pto_performance", 1, 1024, 512, 3072, true));
    EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us);
    EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us);
    EXPECT_EQ(to_json(functional.results).at("kernels").dump(), to_json(timing.results).at("kernels").dump());
    EXPECT_EQ(to_json(timing.results).dump(), to_json(again.results).dump());
}

TEST(GemmPerformance, ThePublishedSizesRun) {
    for (int size : {1536, 3072}) {
        const ProgramOutput out = test::run_op(config("pto_performance", 1, size, size, size, true));
        const nlohmann::json k = pipelined_kernel(out);
        EXPECT_EQ(k.at("kernel"), "GemmPerformance");
        EXPECT_EQ(k.at("blocks"), 24);
        EXPECT_EQ(k.at("cores").at("aic"), 24);
        EXPECT_GT(k.at("kernel_us").get<double>(), 0.0);
        // Bound by the cube and the loads: both busy most of the time, FIX a small share.
        const nlohmann::json& aic = k.at("pipe_ratio").at("aic");
        EXPECT_GT(aic.at("cube").at("mean").get<double>(), 0.5) << size;
        EXPECT_GT(aic.at("mte2").at("mean").get<double>(), 0.5) << size;
        EXPECT_LT(aic.at("fixp").at("mean").get<double>(), 0.2) << size;
    }
}

TEST(GemmPerformance, TwentyFourBlocksOnTwentyCoresRunInWaves) {
    const Profile b3 = load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/Ascend910B3.toml");
    ASSERT_EQ(b3.chip.aic_cores, 20);
    const ProgramOutput on_b3 = test::run_op(config("pto_performance", 1, 1536, 1536, 1536, true), b3);
    const ProgramOutput on_b1 = test::run_op(config("pto_performance", 1, 1536, 1536, 1536, true));
    const nlohmann::json k3 = pipelined_kernel(on_b3);
    EXPECT_EQ(k3.at("blocks"), 24);
    EXPECT_EQ(k3.at("cores").at("aic"), 20);
    // Blocks 20-23 are a second wave: on the same clock, the kernel takes more than one block's
    // time and at most two.
    const double one_wave = pipelined_kernel(on_b1).at("kernel_us").get<double>();
    EXPECT_GT(k3.at("kernel_us").get<double>(), 1.5 * one_wave);
    EXPECT_LE(k3.at("kernel_us").get<double>(), 2.0 * one_wave + 1.0);
}

void expect_refused(RunRequest cfg, std::initializer_list<const char*> parts) {
    const std::string e = test::refusal_of(std::move(cfg));
    ASSERT_FALSE(e.empty());
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    for (const char* part : parts) EXPECT_NE(e.find(part), std::string::npos) << part << " in: " << e;
}

TEST(GemmPerformance, RefusesWhatThePublishedKernelCannotRun) {
    expect_refused(config("pto_performance", 1, 1000, 512, 1536), {"--gm 1000", "no tail handling", "nearest valid: 1024"});
    expect_refused(config("pto_performance", 1, 512, 512, 1000), {"--gn 1000", "nearest valid: 1536"});
    expect_refused(config("pto_performance", 1, 512, 320, 1536), {"--gk 320", "stepKa", "nearest valid: 256"});
    RunRequest tile = config("pto_performance", 1, 512, 512, 1536);
    tile.base_m = 64;
    expect_refused(tile, {"--base-m 64", "128 x 256 x 64", "nearest valid: 128", "--variant tiled"});
    RunRequest blocks = config("pto_performance", 1, 512, 512, 1536);
    blocks.compute_blocks = 20;
    expect_refused(blocks, {"--compute-blocks 20", "4 x 6 grid", "nearest valid: 24"});
    RunRequest comm = config("pto_performance", 1, 512, 512, 1536);
    comm.comm_blocks = 4;
    expect_refused(comm, {"--comm-blocks 4", "no communication kernel"});
    RunRequest bf16 = config("pto_performance", 1, 512, 512, 1536);
    bf16.dtype = DType::BF16;
    expect_refused(bf16, {"--dtype bf16"});
    RunRequest bias = config("pto_performance", 1, 512, 512, 1536);
    bias.bias = kernels::BiasKind::N;
    expect_refused(bias, {"--bias n", "takes no bias"});
    // One rank is a gemm's; a collective still needs two.
    EXPECT_EQ(test::refusal_of(config("pto_performance", 1, 512, 512, 1536)), "");
    RunRequest seed;
    seed.ranks = 1;
    expect_refused(seed, {"-n 1", "allgather_gemm", "not a collective", "nearest valid: 2"});
}

}  // namespace gemm_test
}  // namespace tandem::host
