// The all-gather of column shards (kernels/common/collectives/all_gather_cols), all_gather_matmul's
// sequential baseline, in both forms: mesh (one direct write per peer) and ring (W-1 steps to the
// next rank, per-step arrival counters). On 2, 4 and 8 ranks of the ring profile (A3,
// test::double_ring_profile) and the full mesh (Ascend910B1): every rank's shard filled with small
// integers, the kernel run on every rank, every rank's gathered tensor checked element by
// element; the sanitizer finds no unsynchronised access; timing-only gives the same times.
// all_gather_matmul, whose sequential view runs the form the topology calls for, verifies on 2, 4
// and 8 ranks of the ring profile.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "kernels/common/collectives/all_gather_cols.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace all_gather_cols_test {

using kernels::collectives::CollectiveAlgo;

const Profile& ring_profile() {
    static const Profile p = test::double_ring_profile();
    return p;
}
const Profile& mesh_profile() {
    static const Profile p = test::b1_profile();
    return p;
}

// Shard `rank`'s element (row, col of the shard): distinct per rank, exact in fp16.
double value_of(int rank, int row, int col) { return double((row * 5 + col * 3 + rank * 7) % 13) - 6.0; }

struct GatherRun {
    std::vector<std::vector<double>> gathered;  // per rank, rows x ranks*shard_cols (functional)
    std::vector<SimTime> end;                   // per rank, the kernel's end
    std::size_t sanitizer_violations = 0;
};

constexpr int kRows = 64;
constexpr int kShardCols = 96;
constexpr int kTileRows = 32;
constexpr int kTileCols = 32;  // 2 x 3 tiles per shard: uneven over 4 blocks

GatherRun run_gather(const Profile& profile, CollectiveAlgo algo, int ranks, int blocks, DataMode mode,
                     bool sanitize = false) {
    Runtime rt(profile, ClusterOptions{ranks, mode, false, sanitize});
    const int cols = ranks * kShardCols;
    const int words = kernels::all_gather_cols_arrival_words(algo, ranks);
    std::vector<GmTensor> gathered;
    std::vector<SignalAddr> arrivals;
    for (int r = 0; r < ranks; ++r) {
        GlobalMemory& gm = rt.cluster().chip(r).gm;
        GmAllocation& a = gm.allocate("gathered", std::int64_t{kRows} * cols * 2 + 64 + 4 * words, true);
        if (mode == DataMode::Functional) {
            // Only the own block holds data; the others are zero until the peers' shards arrive.
            std::memset(a.data.data(), 0, static_cast<std::size_t>(std::int64_t{kRows} * cols * 2));
            for (int row = 0; row < kRows; ++row)
                for (int c = 0; c < kShardCols; ++c) {
                    const std::uint16_t h = float_to_half(float(value_of(r, row, c)));
                    std::memcpy(a.data.data() + (std::int64_t{row} * cols + r * kShardCols + c) * 2, &h, 2);
                }
        }
        gathered.emplace_back(a, 0, kRows, cols, cols, DType::F16);
        arrivals.push_back(SignalAddr{r, a.base + std::int64_t{kRows} * cols * 2 + 64});
    }
    GatherRun out;
    out.end.resize(static_cast<std::size_t>(ranks));
    rt.run_hosts([&](HostContext& host) {
        kernels::AllGatherColsArgs args;
        args.my_rank = host.rank();
        args.gathered = gathered;
        args.shard_cols = kShardCols;
        args.tile_rows = kTileRows;
        args.tile_cols = kTileCols;
        args.arrivals = arrivals;
        args.algo = algo;
        host.write_signals(arrivals[static_cast<std::size_t>(host.rank())].address, words, 0);
        host.barrier();
        Stream& s = host.create_stream("comm");
        s.launch(kernels::make_all_gather_cols_kernel(args, blocks));
        s.synchronize();
        out.end[static_cast<std::size_t>(host.rank())] = s.kernel_stats().back().end;
    });
    if (mode == DataMode::Functional) {
        for (int r = 0; r < ranks; ++r) {
            const std::byte* base = gathered[static_cast<std::size_t>(r)].allocation().data.data();
            std::vector<double> v(static_cast<std::size_t>(kRows) * cols);
            for (std::size_t i = 0; i < v.size(); ++i) {
                std::uint16_t h;
                std::memcpy(&h, base + i * 2, 2);
                v[i] = half_to_float(h);
            }
            out.gathered.push_back(std::move(v));
        }
    }
    if (sanitize) out.sanitizer_violations = rt.cluster().sanitizer()->total_violations();
    return out;
}

void expect_gathered(const GatherRun& run, int ranks) {
    const int cols = ranks * kShardCols;
    for (int r = 0; r < ranks; ++r)
        for (int row = 0; row < kRows; ++row)
            for (int c = 0; c < cols; ++c)
                ASSERT_EQ(run.gathered[static_cast<std::size_t>(r)][static_cast<std::size_t>(row * cols + c)],
                          value_of(c / kShardCols, row, c % kShardCols))
                    << "rank " << r << " row " << row << " column " << c;
}

TEST(AllGatherCols, RingAndMeshGatherEveryShardOnTheRingProfile) {
    for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Mesh}) {
        for (int ranks : {2, 4, 8}) {
            SCOPED_TRACE(testing::Message() << kernels::collectives::collective_algo_name(algo) << ", " << ranks
                                            << " ranks");
            expect_gathered(run_gather(ring_profile(), algo, ranks, 4, DataMode::Functional), ranks);
        }
    }
}

TEST(AllGatherCols, RingGathersOnTheFullMeshToo) {
    for (int ranks : {2, 4, 8}) {
        SCOPED_TRACE(testing::Message() << ranks << " ranks");
        expect_gathered(run_gather(mesh_profile(), CollectiveAlgo::Ring, ranks, 3, DataMode::Functional), ranks);
    }
}

TEST(AllGatherCols, RingIsCleanUnderTheSanitizer) {
    for (int ranks : {2, 4, 8}) {
        const GatherRun run = run_gather(ring_profile(), CollectiveAlgo::Ring, ranks, 4, DataMode::Functional, true);
        EXPECT_EQ(run.sanitizer_violations, 0u) << ranks << " ranks";
        expect_gathered(run, ranks);
    }
}

TEST(AllGatherCols, TimingOnlyGivesTheFunctionalTimes) {
    for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Mesh}) {
        const GatherRun functional = run_gather(ring_profile(), algo, 8, 4, DataMode::Functional);
        const GatherRun timing = run_gather(ring_profile(), algo, 8, 4, DataMode::TimingOnly);
        EXPECT_EQ(functional.end, timing.end) << kernels::collectives::collective_algo_name(algo);
    }
}

// all_gather_matmul on the ring profile (its sequential view runs the ring form): every variant
// verifies on 2, 4 and 8 ranks and the views keep their invariants.
TEST(AllGatherCols, AllGatherMatmulUsesTheRingFormOnTheRingProfile) {
    for (const char* variant : {"pull", "push", "staged"}) {
        for (int ranks : {2, 4, 8}) {
            SCOPED_TRACE(testing::Message() << variant << ", " << ranks << " ranks");
            host::RunRequest cfg;
            cfg.op = "all_gather_matmul";
            cfg.variant = variant;
            cfg.ranks = ranks;
            cfg.m = 200;  // ragged M and N: padded
            cfg.n = 150;
            cfg.base_m = 64;
            cfg.base_n = 64;
            cfg.k = ranks * 64 * 2;
            cfg.compute_blocks = 4;
            cfg.comm_blocks = 4;
            cfg.bias = kernels::BiasKind::N;
            const host::ProgramOutput out = host::run_program(host::resolve_run(cfg, ring_profile()), ring_profile());
            EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
            const host::ViewTimes& t = out.results.times;
            EXPECT_GT(t.seq_comm_us, 0.0);
            EXPECT_LE(t.compute_only_us, t.pipelined_us);
        }
    }
}

}  // namespace all_gather_cols_test
}  // namespace tandem
