// AllGather+GEMM (the seed), what is its own (tests/kernels/op_conformance_test.cpp checks what every op
// must do): chunks that straddle row groups and fewer comm blocks than destinations verify, the
// failure report of a sabotaged kernel, real overlap, the compute kernel's local phase never
// stalls, and byte-identical results across runs.
#include <gtest/gtest.h>

#include <map>

#include "sim/core/cost_model.hpp"

#include "host/run/program.hpp"
#include "kernels/allgather_gemm/ready_queue.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace allgather_gemm_test {

RunRequest config(int ranks, int m, int k, int n, bool timing_only = false) {
    RunRequest c;
    c.ranks = ranks;
    c.m = m;
    c.k = k;
    c.n = n;
    c.timing_only = timing_only;
    return c;
}

ProgramOutput run(RunRequest cfg, const std::string& fault = "", const RunOutputs& outputs = {}) {
    cfg.fault = fault;
    return test::run_op(cfg, test::b1_profile(), outputs);
}

// The views' invariants, and the seed's: the pipelined view no slower than the sequential one,
// the overlap a percentage, every contract key in the results.
void expect_view_invariants(const ProgramOutput& out) {
    test::expect_view_invariants(out);
    const RunMetrics m = compute_metrics(out.results.id, out.results.times);
    EXPECT_LE(out.results.times.pipelined_us, m.sequential_us);
    EXPECT_GE(m.overlap_eff_pct, 0.0);
    EXPECT_LE(m.overlap_eff_pct, 100.0);
    const nlohmann::json j = to_json(out.results);
    for (const std::string& key : contract_keys()) EXPECT_TRUE(j.contains(key)) << key;
}

struct Shape {
    int ranks, m, k, n;
    std::optional<int> comm_blocks;
};

class AllGatherGemmFunctional : public ::testing::TestWithParam<Shape> {};

TEST_P(AllGatherGemmFunctional, VerifiesAndKeepsViewInvariants) {
    const Shape s = GetParam();
    RunRequest cfg = config(s.ranks, s.m, s.k, s.n);
    cfg.comm_blocks = s.comm_blocks;
    const ProgramOutput out = run(cfg);
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    expect_view_invariants(out);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AllGatherGemmFunctional,
    ::testing::Values(// K = 768: 3 K tiles per row group with 4-tile chunks, so chunks straddle row groups.
                      Shape{2, 1024, 768, 256, std::nullopt},
                      // Fewer comm blocks (2) than destinations (3): work items dealt round-robin.
                      Shape{4, 1024, 512, 256, 2}));

TEST(AllGatherGemm, StraddlingShapeReallyStraddles) {
    // Guard for the parameter above: M/n = 512 rows, K = 768 -> 4 row groups x 3 K tiles = 12
    // tiles per source, 4 per chunk: a chunk covers parts of two row groups.
    const int k_tiles = 768 / 256;
    const int tiles = (1024 / 2 / 128) * k_tiles;
    const int chunk = kernels::compute_chunk_size(tiles);
    EXPECT_EQ(chunk, 4);
    EXPECT_NE(chunk % k_tiles, 0);
}

TEST(AllGatherGemm, CorruptedKernelFailsVerification) {
    const ProgramOutput out = run(config(2, 512, 512, 256), "skip_last_k_tile");
    EXPECT_EQ(out.results.verification, Verification::Failed);
    EXPECT_NE(out.failure_report.find("expected"), std::string::npos);
}

TEST(AllGatherGemm, PipelinedOverlapsWhenCommAndComputeAreAlike) {
    // 2 ranks, 4096 x 4096 x 4096: the comm kernel and the compute kernel take similar time.
    const ProgramOutput out = run(config(2, 4096, 4096, 4096, true));
    const ViewTimes& t = out.results.times;
    const RunMetrics m = compute_metrics(out.results.id, t);
    ASSERT_GT(std::min(t.seq_comm_us, t.seq_compute_us), 0.4 * std::max(t.seq_comm_us, t.seq_compute_us));
    EXPECT_LT(t.pipelined_us, 0.85 * m.sequential_us);
    EXPECT_GT(m.overlap_eff_pct, 30.0);
    expect_view_invariants(out);
}

}  // namespace allgather_gemm_test
}  // namespace tandem::host

namespace tandem::host {
namespace allgather_gemm_test {

TEST(AllGatherGemm, FirstComputeStallComesAfterTheLocalPhase) {
    // Phase 1 (local rows) must never wait: the cube of a block with local rows runs without a
    // gap until its last local output tile is stored, and the block waits on a remote source
    // (a TWAIT that really blocks) only after that.
    const RunRequest cfg = config(2, 4096, 4096, 1024, true);
    RunOutputs logged;
    logged.record_log = true;
    const ProgramOutput out = run(cfg, "", logged);
    const auto& log = out.bench.pipelined_log;
    ASSERT_FALSE(log.empty());
    const CostModel cost(test::b1_profile());
    const SimTime poll = cost.twait_poll_ps;
    // Between output tiles the cube waits for the accumulator's store (one L0C buffer): allow
    // that, plus a K tile's loads; a real stall on a remote source is far longer.
    const SimTime gap_allowed = cost.gm_latency_ps + cost.transfer_ps(4LL * cfg.base_m * cfg.base_n, cost.l0c_to_gm_bps) +
                                from_us(0.5);
    for (int rank = 0; rank < cfg.ranks; ++rank) {
        const std::int64_t row_bytes = 4LL * cfg.n;
        const std::int64_t local_begin = out.bench.out_base[static_cast<std::size_t>(rank)] + rank * (cfg.m / cfg.ranks) * row_bytes;
        const std::int64_t local_end = local_begin + (cfg.m / cfg.ranks) * row_bytes;
        std::map<int, SimTime> local_done;                 // per block: end of its last local store
        std::map<int, std::vector<const InstrRecord*>> cube;  // per block: its matmuls
        std::map<int, SimTime> first_blocking_wait_end;
        for (const InstrRecord& r : log) {
            if (r.rank != rank || r.core_type != CoreType::AIC) continue;
            if (r.op == Opcode::TSTORE && r.address >= local_begin && r.address < local_end)
                local_done[r.block] = std::max(local_done[r.block], r.end);
            if (r.op == Opcode::TMATMUL || r.op == Opcode::TMATMUL_ACC) cube[r.block].push_back(&r);
            if (r.op == Opcode::TWAIT && r.end - r.start > poll + 1 && !first_blocking_wait_end.count(r.block))
                first_blocking_wait_end[r.block] = r.end;
        }
        ASSERT_FALSE(local_done.empty());
        ASSERT_FALSE(first_blocking_wait_end.empty()) << "rank " << rank << ": the compute kernel never waited";
        for (const auto& [block, done] : local_done) {
            const auto& mm = cube[block];
            for (std::size_t i = 1; i < mm.size() && mm[i]->end <= done; ++i)
                EXPECT_LE(mm[i]->start - mm[i - 1]->end, gap_allowed) << "rank " << rank << " block " << block;
            if (first_blocking_wait_end.count(block)) {
                EXPECT_GT(first_blocking_wait_end[block], done) << "rank " << rank << " block " << block;
            }
        }
    }
}

}  // namespace allgather_gemm_test
}  // namespace tandem::host

namespace tandem::host {
namespace allgather_gemm_test {

TEST(AllGatherGemm, ResultsJsonIsByteIdenticalAcrossRuns) {
    // Per-rank figures are gathered from host threads in whatever order they finish; the JSON
    // must not depend on that order.
    const std::string first = to_json(run(config(4, 2048, 1024, 512, true)).results).dump();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(to_json(run(config(4, 2048, 1024, 512, true)).results).dump(), first);
}

}  // namespace allgather_gemm_test
}  // namespace tandem::host
