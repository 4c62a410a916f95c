// The baseline collectives of kernels/common/collectives/ (reduce-scatter, all-gather,
// all-reduce; mesh and ring) on 2, 4 and 8 ranks: each rank's buffer filled with small
// integers, the kernel run on every rank, the result checked element by element (exact: the
// sums are integers); timing-only runs give the same times; the algorithm HCCL would pick
// follows the topology; the slices are row blocks when the grid asks for it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/collectives/all_gather.hpp"
#include "kernels/common/collectives/all_reduce.hpp"
#include "kernels/common/collectives/reduce_scatter.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace collectives_test {

using namespace kernels::collectives;

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

enum class Coll { ReduceScatter, AllGather, AllReduce };

double value_of(int rank, std::int64_t i) { return double((i * 7 + rank * 3) % 11) - 5.0; }

void put(std::byte* base, DType t, std::int64_t i, double v) {
    std::byte* p = base + i * dtype_bytes(t);
    if (t == DType::F32) {
        const float f = float(v);
        std::memcpy(p, &f, 4);
    } else {
        const std::uint16_t h = t == DType::F16 ? float_to_half(float(v)) : float_to_bf16(float(v));
        std::memcpy(p, &h, 2);
    }
}

double get(const std::byte* base, DType t, std::int64_t i) {
    const std::byte* p = base + i * dtype_bytes(t);
    if (t == DType::F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return t == DType::F16 ? half_to_float(h) : bf16_to_float(h);
}

struct CollRun {
    std::vector<std::vector<double>> data;  // per rank, after the collective (functional)
    std::vector<SimTime> end;               // per rank, the kernel's end
};

CollRun run_collective(Coll coll, CollectiveAlgo algo, int ranks, int rows, int cols, DType dtype, int blocks,
                       DataMode mode = DataMode::Functional) {
    Runtime rt(profile(), ClusterOptions{ranks, mode, false});
    const CollectiveLayout layout(ranks, make_comm_grid(rows, cols, dtype, rows / ranks), dtype, blocks);
    std::vector<GmTensor> data;
    std::vector<CollectiveWorkspace> ws;
    for (int r = 0; r < ranks; ++r) {
        GlobalMemory& gm = rt.cluster().chip(r).gm;
        const GmAllocation& ws_alloc = gm.allocate("collective", layout.bytes() + 64, true);
        GmAllocation& d = gm.allocate("data", std::int64_t{rows} * cols * dtype_bytes(dtype), true);
        if (mode == DataMode::Functional) {
            for (std::int64_t i = 0; i < std::int64_t{rows} * cols; ++i) put(d.data.data(), dtype, i, value_of(r, i));
        }
        data.emplace_back(d, 0, rows, cols, cols, dtype);
        ws.push_back(CollectiveWorkspace{&ws_alloc, 64});
    }
    CollRun out;
    out.end.resize(static_cast<std::size_t>(ranks));
    rt.run_hosts([&](HostContext& host) {
        const CollectiveArgs args{layout, algo, host.rank(), data, ws};
        reset_collective_flags(host, args);
        host.barrier();
        Stream& s = host.create_stream("comm");
        switch (coll) {
            case Coll::ReduceScatter: s.launch(make_reduce_scatter_kernel(args)); break;
            case Coll::AllGather: s.launch(make_all_gather_kernel(args)); break;
            case Coll::AllReduce: s.launch(make_all_reduce_kernel(args)); break;
        }
        s.synchronize();
        out.end[static_cast<std::size_t>(host.rank())] = s.kernel_stats().back().end;
    });
    if (mode == DataMode::Functional) {
        for (int r = 0; r < ranks; ++r) {
            std::vector<double> v(static_cast<std::size_t>(rows) * cols);
            for (std::int64_t i = 0; i < std::int64_t{rows} * cols; ++i)
                v[static_cast<std::size_t>(i)] = get(data[static_cast<std::size_t>(r)].allocation().data.data(), dtype, i);
            out.data.push_back(std::move(v));
        }
    }
    return out;
}

// The row-major element range of slice `owner` (whole comm tiles).
bool in_slice(const CollectiveLayout& l, int owner, std::int64_t i) {
    const CommGrid& g = l.grid;
    const int row = static_cast<int>(i / g.cols);
    const int col = static_cast<int>(i % g.cols);
    const int tile = row / g.tile_rows * g.col_tiles() + col / g.tile_cols;
    const Range s = l.slice(owner);
    return tile >= s.first && tile < s.first + s.count;
}

void check(Coll coll, CollectiveAlgo algo, int ranks, int rows, int cols, DType dtype, int blocks) {
    SCOPED_TRACE(testing::Message() << "ranks " << ranks << ", " << rows << "x" << cols << " " << dtype_name(dtype)
                                    << ", " << collective_algo_name(algo) << ", " << blocks << " blocks");
    const CollRun run = run_collective(coll, algo, ranks, rows, cols, dtype, blocks);
    const CollectiveLayout layout(ranks, make_comm_grid(rows, cols, dtype, rows / ranks), dtype, blocks);
    for (int r = 0; r < ranks; ++r) {
        for (std::int64_t i = 0; i < std::int64_t{rows} * cols; ++i) {
            double sum = 0;
            for (int q = 0; q < ranks; ++q) sum += value_of(q, i);
            double want = value_of(r, i);  // what is left where the collective does not write
            if (coll == Coll::AllReduce) want = sum;
            if (coll == Coll::ReduceScatter && in_slice(layout, r, i)) want = sum;
            if (coll == Coll::AllGather) {
                for (int q = 0; q < ranks; ++q)
                    if (in_slice(layout, q, i)) want = value_of(q, i);
            }
            if (coll == Coll::ReduceScatter && !in_slice(layout, r, i)) continue;  // scratch
            ASSERT_EQ(run.data[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)], want)
                << "rank " << r << " element " << i;
        }
    }
}

constexpr CollectiveAlgo kAlgos[] = {CollectiveAlgo::Mesh, CollectiveAlgo::Ring};

TEST(Collectives, AllReduceSumsEveryRanksBufferOnEveryRank) {
    for (CollectiveAlgo algo : kAlgos) {
        check(Coll::AllReduce, algo, 2, 64, 256, DType::F32, 8);
        check(Coll::AllReduce, algo, 4, 128, 256, DType::F16, 8);
        check(Coll::AllReduce, algo, 8, 64, 512, DType::BF16, 16);
    }
}

TEST(Collectives, ReduceScatterLeavesEachRanksSliceSummed) {
    for (CollectiveAlgo algo : kAlgos) {
        check(Coll::ReduceScatter, algo, 2, 64, 256, DType::F32, 4);
        check(Coll::ReduceScatter, algo, 4, 128, 512, DType::F16, 8);
        check(Coll::ReduceScatter, algo, 8, 128, 256, DType::F32, 8);
    }
}

TEST(Collectives, AllGatherSpreadsEachRanksSlice) {
    for (CollectiveAlgo algo : kAlgos) {
        check(Coll::AllGather, algo, 2, 64, 256, DType::F16, 4);
        check(Coll::AllGather, algo, 4, 128, 256, DType::F32, 8);
        check(Coll::AllGather, algo, 8, 64, 512, DType::BF16, 16);
    }
}

// More blocks than a slice has tiles, slices of unequal sizes, a tile narrower than the rows.
TEST(Collectives, UnevenSlicesAndIdleBlocks) {
    for (CollectiveAlgo algo : kAlgos) {
        check(Coll::AllReduce, algo, 3, 30, 4096, DType::F32, 8);
        // One-row tiles, many items per block: TWAITs resumed across a window fold (these two
        // stopped with "before its forgotten history" before LogicalProcess::check_waiters
        // clamped the wake time).
        check(Coll::AllReduce, algo, 3, 40, 4096, DType::F32, 8);
        check(Coll::AllReduce, algo, 3, 40, 16384, DType::F32, 48);
        check(Coll::AllReduce, algo, 3, 48, 16384, DType::F32, 48);
        check(Coll::AllReduce, algo, 4, 8, 64, DType::F16, 48);
    }
}

TEST(Collectives, TimingOnlyGivesTheSameTimes) {
    for (CollectiveAlgo algo : kAlgos) {
        const CollRun f = run_collective(Coll::AllReduce, algo, 4, 256, 512, DType::F32, 8, DataMode::Functional);
        const CollRun t = run_collective(Coll::AllReduce, algo, 4, 256, 512, DType::F32, 8, DataMode::TimingOnly);
        EXPECT_EQ(f.end, t.end);
        for (SimTime e : f.end) EXPECT_GT(e, 0);
    }
}

TEST(Collectives, TheAlgorithmFollowsTheTopologyAsHcclChoosesIt) {
    EXPECT_EQ(collective_algo_for(TopologyKind::FullMesh), CollectiveAlgo::Mesh);
    EXPECT_EQ(collective_algo_for(TopologyKind::Ring), CollectiveAlgo::Ring);
    EXPECT_EQ(collective_algo_for(TopologyKind::DoubleRing), CollectiveAlgo::Ring);
}

// On a full mesh the mesh algorithm, which uses every link at once, beats the ring.
TEST(Collectives, MeshBeatsRingOnAFullMesh) {
    const CollRun mesh = run_collective(Coll::AllReduce, CollectiveAlgo::Mesh, 8, 512, 2048, DType::F32, 48,
                                        DataMode::TimingOnly);
    const CollRun ring = run_collective(Coll::AllReduce, CollectiveAlgo::Ring, 8, 512, 2048, DType::F32, 48,
                                        DataMode::TimingOnly);
    EXPECT_LT(mesh.end[0], ring.end[0]);
}

TEST(Collectives, CommGridTilesFitUbAndSlicesAreRowBlocks) {
    const CommGrid g = make_comm_grid(1024, 8192, DType::F32, 1024 / 8);
    EXPECT_LE(std::int64_t{g.tile_rows} * g.tile_cols * 4, kCommTileBytes);
    EXPECT_EQ(g.tile_cols, 8192);
    const CollectiveLayout l(8, g, DType::F32, 48);
    for (int r = 0; r < 8; ++r) {
        EXPECT_EQ(l.slice(r).first * g.tile_rows, r * 128);
        EXPECT_EQ(l.slice(r).count * g.tile_rows, 128);
    }
    const CommGrid wide = make_comm_grid(256, 16384, DType::F32, 256);
    EXPECT_LT(wide.tile_cols, 16384);
    EXPECT_EQ(16384 % wide.tile_cols, 0);
}

TEST(Collectives, ABufferOutsideThePeerWindowIsRefused) {
    Runtime rt(profile(), ClusterOptions{2, DataMode::Functional, false});
    const CollectiveLayout layout(2, make_comm_grid(64, 256, DType::F32, 32), DType::F32, 4);
    std::vector<GmTensor> data;
    std::vector<CollectiveWorkspace> ws;
    for (int r = 0; r < 2; ++r) {
        GlobalMemory& gm = rt.cluster().chip(r).gm;
        ws.push_back(CollectiveWorkspace{&gm.allocate("collective", layout.bytes(), true), 0});
        data.emplace_back(gm.allocate("data", 64 * 256 * 4, /*shared=*/false), 0, 64, 256, 256, DType::F32);
    }
    const CollectiveArgs args{layout, CollectiveAlgo::Mesh, 0, data, ws};
    try {
        (void)make_all_reduce_kernel(args);
        FAIL() << "expected a SimError";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("peer window"), std::string::npos) << e.what();
    }
}

}  // namespace collectives_test
}  // namespace tandem
