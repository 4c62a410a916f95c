// TSTORE with AtomicType::AtomicAdd: the target adds (dst += src in dst's dtype), from UB (MTE3)
// and from L0C (FIX, after its cast), locally and into a peer's window; the adds are messages
// ordered by simulated time, so several ranks and both streams of a rank adding into one region
// give the exact sum (integer data) and the same bytes on every run. Also the interconnect byte
// counters of KernelStats on a known transfer pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/float_ref.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_atomic_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

SimTime cyc(double n) { return cycles_to_ps(n, profile().chip.core_clock_mhz); }

void put(GmAllocation& a, DType t, std::int64_t i, double v) {
    std::byte* p = a.data.data() + i * dtype_bytes(t);
    if (t == DType::F32) {
        const float f = float(v);
        std::memcpy(p, &f, 4);
    } else {
        const std::uint16_t h = t == DType::F16 ? float_to_half(float(v)) : float_to_bf16(float(v));
        std::memcpy(p, &h, 2);
    }
}

double get(const GmAllocation& a, DType t, std::int64_t i) {
    const std::byte* p = a.data.data() + i * dtype_bytes(t);
    if (t == DType::F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return t == DType::F16 ? half_to_float(h) : bf16_to_float(h);
}

std::vector<InstrRecord> of(const std::vector<InstrRecord>& log, Opcode op, int rank = -1) {
    std::vector<InstrRecord> out;
    for (const InstrRecord& r : log)
        if (r.op == op && (rank < 0 || r.rank == rank)) out.push_back(r);
    return out;
}

// ============================================================ local, timing =================

TEST(AtomicStore, LocalAddFromUbSumsAndLandsNoEarlierThanTheAtomicLatency) {
    constexpr int rows = 16, cols = 64;
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation& src = rt.host(0).malloc("src", rows * cols * 4);
    GmAllocation& dst = rt.host(0).malloc("dst", rows * cols * 4);
    for (int i = 0; i < rows * cols; ++i) {
        put(src, DType::F32, i, double(i % 37) - 18.0);
        put(dst, DType::F32, i, double(i) * 3.0);
    }
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "ub");
        co_await TLOAD(ub, GmTensor(src, 0, rows, cols, cols, DType::F32));
        pipe_barrier(b, PIPE_ALL);
        co_await TSTORE(GmTensor(dst, 0, rows, cols, cols, DType::F32), ub, AtomicType::AtomicAdd);
        co_await TSTORE(GmTensor(dst, 0, rows, cols, cols, DType::F32), ub, AtomicType::AtomicAdd);
    });
    for (int i = 0; i < rows * cols; ++i) ASSERT_EQ(get(dst, DType::F32, i), double(i) * 3.0 + 2.0 * (double(i % 37) - 18.0)) << i;
    const auto adds = of(rt.cluster().event_log(), Opcode::TSTORE_ATOMIC_ADD);
    ASSERT_EQ(adds.size(), 2u);
    const auto& p = profile();
    for (const InstrRecord& a : adds) {
        EXPECT_EQ(a.pipe, Pipe::MTE3);
        EXPECT_EQ(a.peer, -1);
        EXPECT_NEAR(double(a.end - a.start),
                    double(cyc(p.pipes.gm_access_latency_cycles) + bytes_at_gib_s(rows * cols * 4.0, p.pipes.ub_to_gm_gib_s)), 2);
    }
    // The first add's pipe was idle: it started at issue; it lands a local atomic latency later
    // (longer than the store itself for this small tile).
    const SimTime issue0 = adds[0].start;
    ASSERT_GT(from_ns(p.interconnect.local_atomic_latency_ns), adds[0].end - adds[0].start);
    EXPECT_EQ(adds[0].visible, issue0 + from_ns(p.interconnect.local_atomic_latency_ns));
    // The second queued behind the first on MTE3: issued one scalar issue after the first.
    EXPECT_EQ(adds[1].start, adds[0].end);
    EXPECT_EQ(adds[1].visible, std::max(adds[1].end, issue0 + cyc(p.pipes.scalar_issue_cycles) +
                                                         from_ns(p.interconnect.local_atomic_latency_ns)));
}

// ============================================================ rounding and order ============

// dst = 1 in fp16; +u then -u (u = 2^-11, half an ulp at 1) gives 1 - u, while -u then +u gives
// 1: the sum is rounded after every add, and the adds land in simulated-time order.
TEST(AtomicStore, Fp16AddsRoundEachSumAndLandInSimulatedTimeOrder) {
    const double u = std::ldexp(1.0, -11);
    for (bool plus_first : {true, false}) {
        constexpr int cols = 16;
        Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
        GmAllocation& vals = rt.host(0).malloc("vals", 2 * cols * 2);
        GmAllocation& dst = rt.host(0).malloc("dst", cols * 2);
        for (int i = 0; i < cols; ++i) {
            put(vals, DType::F16, i, u);
            put(vals, DType::F16, cols + i, -u);
            put(dst, DType::F16, i, 1.0);
        }
        test::run_one_kernel(rt, CoreType::AIV, 2, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 1, cols, DType::F16, "ub");
            const bool plus = b.block_idx() == 0;
            co_await TLOAD(ub, GmTensor(vals, plus ? 0 : cols * 2, 1, cols, cols, DType::F16));
            pipe_barrier(b, PIPE_ALL);
            // The block that goes second first spends a few microseconds.
            if (plus != plus_first)
                for (int i = 0; i < 2000; ++i) pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(GmTensor(dst, 0, 1, cols, cols, DType::F16), ub, AtomicType::AtomicAdd);
        });
        for (int i = 0; i < cols; ++i) EXPECT_EQ(get(dst, DType::F16, i), plus_first ? 1.0 - u : 1.0) << plus_first;
    }
}

TEST(AtomicStore, Bf16AndFp32AddsRoundToTheirDtype) {
    struct Case {
        DType t;
        double init, add, want;
    };
    const Case cases[] = {{DType::BF16, 1.0, std::ldexp(1.0, -8), 1.0},                     // a tie, to even
                          {DType::BF16, 256.0, 3.0, 260.0},                                  // 259 -> 260 (ulp 2)
                          {DType::F32, 1.0, std::ldexp(1.0, -24), 1.0},                      // a tie in fp32
                          {DType::F32, 16777216.0, 3.0, 16777220.0}};                        // 2^24 + 3 -> + 4
    for (const Case& c : cases) {
        Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
        GmAllocation& v = rt.host(0).malloc("v", 8 * 4);
        GmAllocation& dst = rt.host(0).malloc("dst", 8 * 4);
        for (int i = 0; i < 8; ++i) {
            put(v, c.t, i, c.add);
            put(dst, c.t, i, c.init);
        }
        test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 1, 8, c.t, "ub");
            co_await TLOAD(ub, GmTensor(v, 0, 1, 8, 8, c.t));
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(GmTensor(dst, 0, 1, 8, 8, c.t), ub, AtomicType::AtomicAdd);
        });
        for (int i = 0; i < 8; ++i) EXPECT_EQ(get(dst, c.t, i), c.want) << dtype_name(c.t) << " " << c.init << " + " << c.add;
    }
}

// From L0C into fp16 GM: the FIX pipe casts the accumulator first, then the target adds in fp16.
TEST(AtomicStore, FromL0cCastsThenAddsInTheTargetDtype) {
    constexpr int m = 16, k = 16, n = 16;
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& a = rt.host(0).malloc("A", m * k * 2);
    GmAllocation& bm = rt.host(0).malloc("B", k * n * 2);
    GmAllocation& dst = rt.host(0).malloc("dst", m * n * 2);
    // A = 1 everywhere; B's columns sum to 2048 + 2j + 1 (odd: a tie in fp16, whose ulp is 2 there).
    for (int i = 0; i < m * k; ++i) put(a, DType::F16, i, 1.0);
    for (int r = 0; r < k; ++r)
        for (int j = 0; j < n; ++j) put(bm, DType::F16, r * n + j, r == 0 ? 2048.0 + 2 * j + 1 - 15.0 : 1.0);
    for (int i = 0; i < m * n; ++i) put(dst, DType::F16, i, 0.5);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& aL1 = b.alloc_tile(MemKind::L1, m, k, DType::F16, "aL1");
        Tile& bL1 = b.alloc_tile(MemKind::L1, k, n, DType::F16, "bL1");
        Tile& aL0 = b.alloc_tile(MemKind::L0A, m, k, DType::F16, "aL0");
        Tile& bL0 = b.alloc_tile(MemKind::L0B, k, n, DType::F16, "bL0");
        Tile& acc = b.alloc_tile(MemKind::L0C, m, n, DType::F32, "acc");
        co_await TLOAD(aL1, GmTensor(a, 0, m, k, k, DType::F16));
        co_await TLOAD(bL1, GmTensor(bm, 0, k, n, n, DType::F16));
        pipe_barrier(b, PIPE_ALL);
        TEXTRACT(aL0, aL1, 0, 0);
        TEXTRACT(bL0, bL1, 0, 0);
        pipe_barrier(b, PIPE_ALL);
        TMATMUL(acc, aL0, bL0);
        pipe_barrier(b, PIPE_ALL);
        co_await TSTORE(GmTensor(dst, 0, m, n, n, DType::F16), acc, AtomicType::AtomicAdd);
    });
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            const double p = 2048.0 + 2 * j + 1;
            const double want = test::round_f16(0.5 + test::round_f16(p));  // cast, then add
            ASSERT_EQ(get(dst, DType::F16, i * n + j), want) << i << "," << j;
            if (j % 2 == 0) {
                ASSERT_NE(want, test::round_f16(p + 0.5)) << "this element must tell the two orders apart";
            }
        }
}

TEST(AtomicStore, IntegerAndTransposedTargetsAreRejected) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    GmAllocation& d = rt.host(0).malloc("d", 16 * 16 * 4);
    try {
        test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 16, 16, DType::I32, "ub");
            co_await TSTORE(GmTensor(d, 0, 16, 16, 16, DType::I32), ub, AtomicType::AtomicAdd);
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("atomic adds take fp32, fp16 or bf16"), std::string::npos) << e.what();
    }
    Runtime rt2(profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& d2 = rt2.host(0).malloc("d", 16 * 16 * 4);
    try {
        test::run_one_kernel(rt2, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 16, 16, DType::F32, "ub");
            co_await TSTORE(GmTensor(d2, 0, 16, 16, 16, DType::F32, Layout::DN), ub, AtomicType::AtomicAdd);
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("AtomicAdd supports the ND layout only"), std::string::npos) << e.what();
    }
}

// ============================================================ many ranks, both streams ======

// Every rank's vector stream (2 AIV blocks) and cube stream (1 AIC block) add into one region of
// rank 0's window, locally or across the links: the exact sum, the same bytes and the same event
// log on every run, and the same times in timing-only mode.
constexpr int kRanks = 4, kRows = 16, kCols = 32;

double ub_val(int rank, int block, int i) { return double((rank * 31 + block * 17 + i * 7) % 23) - 11.0; }
double a_val(int rank, int i) { return double((i + rank) % 5); }
double b_val(int rank, int i) { return double((i * 3 + rank) % 7) - 3.0; }

struct ManyResult {
    std::vector<double> sum;
    std::vector<std::string> log;
    std::vector<std::int64_t> remote_store_bytes;  // per rank, both streams
};

ManyResult run_many(DataMode mode) {
    Runtime rt(profile(), ClusterOptions{kRanks, mode, true});
    GmAllocation& region = rt.cluster().chip(0).gm.allocate("region", kRows * kCols * 4, /*shared=*/true);
    std::vector<GmAllocation*> src(kRanks), a(kRanks), bm(kRanks);
    for (int r = 0; r < kRanks; ++r) {
        src[r] = &rt.cluster().chip(r).gm.allocate("src", 2 * kRows * kCols * 4);
        a[r] = &rt.cluster().chip(r).gm.allocate("A", kRows * 16 * 2);
        bm[r] = &rt.cluster().chip(r).gm.allocate("B", 16 * kCols * 2);
        if (mode != DataMode::Functional) continue;
        for (int blk = 0; blk < 2; ++blk)
            for (int i = 0; i < kRows * kCols; ++i) put(*src[r], DType::F32, blk * kRows * kCols + i, ub_val(r, blk, i));
        for (int i = 0; i < kRows * 16; ++i) put(*a[r], DType::F16, i, a_val(r, i));
        for (int i = 0; i < 16 * kCols; ++i) put(*bm[r], DType::F16, i, b_val(r, i));
    }
    if (mode == DataMode::Functional)
        for (int i = 0; i < kRows * kCols; ++i) put(region, DType::F32, i, 1000.0);
    const GmTensor target(region, 0, kRows, kCols, kCols, DType::F32);
    ManyResult out;
    out.remote_store_bytes.assign(kRanks, 0);
    rt.run_hosts([&](HostContext& host) {
        const int r = host.rank();
        Stream& vec = host.create_stream("vec");
        Stream& cube = host.create_stream("cube");
        vec.launch(KernelLaunch{"vec_add", CoreType::AIV, 2, [&, r](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "ub");
            co_await TLOAD(ub, GmTensor(*src[r], std::int64_t{b.block_idx()} * kRows * kCols * 4, kRows, kCols, kCols, DType::F32));
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(target, ub, AtomicType::AtomicAdd);
        }});
        cube.launch(KernelLaunch{"cube_add", CoreType::AIC, 1, [&, r](BlockCtx& b) -> Task {
            Tile& aL1 = b.alloc_tile(MemKind::L1, kRows, 16, DType::F16, "aL1");
            Tile& bL1 = b.alloc_tile(MemKind::L1, 16, kCols, DType::F16, "bL1");
            Tile& aL0 = b.alloc_tile(MemKind::L0A, kRows, 16, DType::F16, "aL0");
            Tile& bL0 = b.alloc_tile(MemKind::L0B, 16, kCols, DType::F16, "bL0");
            Tile& acc = b.alloc_tile(MemKind::L0C, kRows, kCols, DType::F32, "acc");
            co_await TLOAD(aL1, GmTensor(*a[r], 0, kRows, 16, 16, DType::F16));
            co_await TLOAD(bL1, GmTensor(*bm[r], 0, 16, kCols, kCols, DType::F16));
            pipe_barrier(b, PIPE_ALL);
            TEXTRACT(aL0, aL1, 0, 0);
            TEXTRACT(bL0, bL1, 0, 0);
            pipe_barrier(b, PIPE_ALL);
            TMATMUL(acc, aL0, bL0);
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(target, acc, AtomicType::AtomicAdd);
        }});
        vec.synchronize();
        cube.synchronize();
        out.remote_store_bytes[static_cast<std::size_t>(r)] =
            vec.kernel_stats().back().remote_store_bytes + cube.kernel_stats().back().remote_store_bytes;
    });
    for (const InstrRecord& rec : rt.cluster().event_log()) out.log.push_back(format_record(rec));
    if (mode == DataMode::Functional)
        for (int i = 0; i < kRows * kCols; ++i) out.sum.push_back(get(region, DType::F32, i));
    return out;
}

TEST(AtomicStore, RanksAndStreamsAddingIntoOneRegionGiveTheExactSumEveryTime) {
    const ManyResult first = run_many(DataMode::Functional);
    ASSERT_EQ(first.sum.size(), std::size_t{kRows * kCols});
    for (int i = 0; i < kRows * kCols; ++i) {
        const int row = i / kCols, col = i % kCols;
        double want = 1000.0;
        for (int r = 0; r < kRanks; ++r) {
            want += ub_val(r, 0, i) + ub_val(r, 1, i);
            for (int k = 0; k < 16; ++k) want += a_val(r, row * 16 + k) * b_val(r, k * kCols + col);
        }
        ASSERT_EQ(first.sum[static_cast<std::size_t>(i)], want) << "element " << i;
    }
    // Rank 0 adds locally; every other rank sends its three tiles across the link.
    EXPECT_EQ(first.remote_store_bytes[0], 0);
    for (int r = 1; r < kRanks; ++r) EXPECT_EQ(first.remote_store_bytes[static_cast<std::size_t>(r)], 3LL * kRows * kCols * 4) << r;
    std::size_t adds = 0;
    for (const std::string& line : first.log) adds += line.find("TSTORE_ATOMIC_ADD") != std::string::npos;
    EXPECT_EQ(adds, std::size_t{3 * kRanks});
    for (int run = 0; run < 2; ++run) {
        const ManyResult again = run_many(DataMode::Functional);
        EXPECT_EQ(again.sum, first.sum);
        EXPECT_EQ(again.log, first.log);
    }
    const ManyResult timing = run_many(DataMode::TimingOnly);
    EXPECT_EQ(timing.log, first.log);
    EXPECT_EQ(timing.remote_store_bytes, first.remote_store_bytes);
}

// ============================================================ byte counters =================

// Rank 0's comm kernel: 3 TPUTs to rank 1 and one remote atomic store to rank 1 (4 tiles sent),
// 2 TGETs from rank 2 (2 tiles loaded), and a local store and a local atomic add (not counted).
TEST(InterconnectBytes, AKnownPatternGivesTheKnownCounts) {
    constexpr int rows = 8, cols = 128;
    constexpr std::int64_t tile = rows * cols * 2;
    for (DataMode mode : {DataMode::Functional, DataMode::TimingOnly}) {
        Runtime rt(profile(), ClusterOptions{3, mode, false});
        GmAllocation& local = rt.cluster().chip(0).gm.allocate("local", 4 * tile);
        GmAllocation& win1 = rt.cluster().chip(1).gm.allocate("win", 4 * tile, true);
        GmAllocation& win2 = rt.cluster().chip(2).gm.allocate("win", 4 * tile, true);
        std::vector<KernelStats> stats;
        rt.run_hosts([&](HostContext& host) {
            if (host.rank() != 0) return;
            Stream& s = host.create_stream("comm");
            s.launch(KernelLaunch{"pattern", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
                auto at = [&](const GmAllocation& g, int i) { return GmTensor(g, i * tile, rows, cols, cols, DType::F16); };
                for (int i = 0; i < 3; ++i) co_await TPUT(at(win1, i), at(local, i), ub);
                for (int i = 0; i < 2; ++i) co_await TGET(at(local, i), at(win2, i), ub);
                co_await TSTORE(at(win1, 3), ub, AtomicType::AtomicAdd);
                co_await TSTORE(at(local, 3), ub, AtomicType::AtomicAdd);
                pipe_barrier(b, PIPE_ALL);
                co_await TSTORE(at(local, 3), ub);
            }});
            s.launch(KernelLaunch{"local_only", CoreType::AIV, 2, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
                co_await TLOAD(ub, GmTensor(local, b.block_idx() * tile, rows, cols, cols, DType::F16));
            }});
            s.synchronize();
            stats = s.kernel_stats();
        });
        ASSERT_EQ(stats.size(), 2u);
        EXPECT_EQ(stats[0].remote_store_bytes, 4 * tile);
        EXPECT_EQ(stats[0].remote_load_bytes, 2 * tile);
        EXPECT_EQ(stats[1].remote_store_bytes, 0);
        EXPECT_EQ(stats[1].remote_load_bytes, 0);
    }
}

}  // namespace isa_atomic_test
}  // namespace tandem
