// The simulator core against costs worked out by hand from the loaded profile: each tile
// instruction's simulated time, overlap between pipes, a double-buffered GEMM against its
// single-buffered twin, a cross-rank TPUT + TNOTIFY / TWAIT pair, waves of blocks and the host's
// launch and synchronisation overheads.
//
// Every expected time below is computed from the profile's numbers with the helpers of
// sim/sim_time.hpp (never from the cost model under test), so changing a number in the profile
// moves both sides together while a change to the model's formulas makes these tests fail.
// Transfers are compared within kTolPs: the model moves bytes in exact integer units and rounds
// the end up to a whole picosecond, the helpers round to nearest.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/cost_model.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_time.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace sim_core_test {

constexpr SimTime kTolPs = 2;

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

// Costs computed by hand from the profile, in picoseconds.
struct Hand {
    const Profile& p = profile();
    SimTime cyc(double n) const { return cycles_to_ps(n, p.chip.core_clock_mhz); }
    SimTime issue() const { return cyc(p.pipes.scalar_issue_cycles); }
    SimTime gm_lat() const { return cyc(p.pipes.gm_access_latency_cycles); }
    SimTime mte1_lat() const { return cyc(p.pipes.mte1_latency_cycles); }
    SimTime set_flag() const { return cyc(p.pipes.set_flag_cycles); }
    SimTime wait_flag() const { return cyc(p.pipes.wait_flag_cycles); }
    SimTime barrier() const { return cyc(p.pipes.pipe_barrier_cycles); }
    SimTime poll() const { return cyc(p.pipes.twait_poll_cycles); }
    // A GM access: start-up latency, then the bytes at the path's per-core rate.
    SimTime gm_move(std::int64_t bytes, double gib_s) const {
        return gm_lat() + bytes_at_gib_s(static_cast<double>(bytes), gib_s);
    }
    // An L1 -> L0 move: `moves` hardware instructions, each with its start-up latency, then the
    // bytes at the path's rate.
    SimTime extract(std::int64_t bytes, double gib_s, int moves = 1) const {
        return moves * mte1_lat() + bytes_at_gib_s(static_cast<double>(bytes), gib_s);
    }
    // The cube formula: fixed + ceil(m/f) ceil(k/f) ceil(n/f) / efficiency cycles.
    SimTime cube(int m, int k, int n) const {
        const int f = p.pipes.cube_fractal;
        const double fractals = std::ceil(double(m) / f) * std::ceil(double(k) / f) * std::ceil(double(n) / f);
        return cyc(p.pipes.cube_fixed_cycles + fractals / p.pipes.cube_efficiency);
    }
    SimTime launch_host() const { return from_us(p.host.launch_host_us); }
    SimTime launch_to_start() const { return from_us(p.host.launch_to_start_us); }
    SimTime kernel_end() const { return from_us(p.host.kernel_end_us); }
    SimTime sync() const { return from_us(p.host.sync_us); }
    SimTime host_barrier() const { return from_us(p.host.host_barrier_us); }
    SimTime remote_atomic() const { return from_ns(p.interconnect.remote_atomic_latency_ns); }
    SimTime local_atomic() const { return from_ns(p.interconnect.local_atomic_latency_ns); }
    SimTime link_lat() const { return from_ns(p.interconnect.link_latency_ns); }
};

ClusterOptions opts(int ranks, DataMode mode = DataMode::Functional) { return ClusterOptions{ranks, mode, true}; }

std::vector<InstrRecord> of(const std::vector<InstrRecord>& log, Opcode op, int rank = 0) {
    std::vector<InstrRecord> out;
    for (const InstrRecord& r : log)
        if (r.op == op && r.rank == rank) out.push_back(r);
    return out;
}

InstrRecord block_record(const std::vector<InstrRecord>& log, int block, int rank = 0, int stream = 0) {
    for (const InstrRecord& r : log)
        if (r.op == Opcode::BLOCK && r.rank == rank && r.block == block && r.stream == stream) return r;
    ADD_FAILURE() << "no BLOCK record for block " << block;
    return {};
}

void fill_f16(GmAllocation& a, std::int64_t count, const std::function<float(std::int64_t)>& value) {
    ASSERT_GE(static_cast<std::int64_t>(a.data.size()), count * 2);
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint16_t h = float_to_half(value(i));
        std::memcpy(a.data.data() + i * 2, &h, 2);
    }
}

float read_f32(const GmAllocation& a, std::int64_t index) {
    float f;
    std::memcpy(&f, a.data.data() + index * 4, 4);
    return f;
}

// ============================================================ 1. instruction costs =========

TEST(InstructionCost, TloadGmToL1IsLatencyPlusBytesOverBandwidth) {
    Hand h;
    Runtime rt(profile(), opts(1));
    GmAllocation& a = rt.host(0).malloc("A", 128 * 256 * 2);
    auto run = test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& aMat = b.alloc_tile(MemKind::L1, 128, 256, DType::F16, "aMat");
        co_await TLOAD(aMat, GmTensor(a, 0, 128, 256, 256, DType::F16));
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    ASSERT_EQ(loads.size(), 1u);
    const SimTime k0 = h.launch_to_start();
    EXPECT_EQ(block_record(log, 0).start, k0);
    EXPECT_EQ(loads[0].pipe, Pipe::MTE2);
    EXPECT_EQ(loads[0].bytes, 128 * 256 * 2);
    EXPECT_EQ(loads[0].start, k0 + h.issue());
    EXPECT_NEAR(loads[0].end - loads[0].start, h.gm_move(128 * 256 * 2, profile().pipes.gm_to_l1_gib_s), kTolPs);
    EXPECT_EQ(run.stats.end, loads[0].end);
}

TEST(InstructionCost, TloadGmToUbUsesTheVectorCoreRate) {
    Hand h;
    Runtime rt(profile(), opts(1));
    GmAllocation& a = rt.host(0).malloc("A", 64 * 256 * 2);
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "ub");
        co_await TLOAD(ub, GmTensor(a, 0, 64, 256, 256, DType::F16));
    });
    const auto loads = of(rt.cluster().event_log(), Opcode::TLOAD);
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_EQ(loads[0].core_type, CoreType::AIV);
    EXPECT_EQ(loads[0].start, h.launch_to_start() + h.issue());
    EXPECT_NEAR(loads[0].end - loads[0].start, h.gm_move(64 * 256 * 2, profile().pipes.gm_to_ub_gib_s), kTolPs);
    // The two paths really differ in the profile, so this test tells them apart.
    EXPECT_NE(profile().pipes.gm_to_ub_gib_s, profile().pipes.gm_to_l1_gib_s);
}

// TLOAD -> flags -> TEXTRACT to L0A and L0B -> flags -> TMATMUL, TMATMUL_ACC -> flags -> TSTORE
// from L0C, every step checked against the hand-computed chain.
TEST(InstructionCost, CubeChainExtractMatmulAndFixStore) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(1));
    // A 128 x 256 fp16 in L1; aL0 = its left 128 x 64 block, bL0 = a 64 x 256 block of B.
    GmAllocation& a = rt.host(0).malloc("A", 128 * 256 * 2);
    GmAllocation& bm = rt.host(0).malloc("B", 64 * 256 * 2);
    GmAllocation& c = rt.host(0).malloc("C", 128 * 256 * 4);
    auto run = test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& aMat = b.alloc_tile(MemKind::L1, 128, 256, DType::F16, "aMat");
        Tile& bMat = b.alloc_tile(MemKind::L1, 64, 256, DType::F16, "bMat");
        Tile& aTile = b.alloc_tile(MemKind::L0A, 128, 64, DType::F16, "aTile");
        Tile& bTile = b.alloc_tile(MemKind::L0B, 64, 256, DType::F16, "bTile");
        Tile& cTile = b.alloc_tile(MemKind::L0C, 128, 256, DType::F32, "cTile");
        co_await TLOAD(aMat, GmTensor(a, 0, 128, 256, 256, DType::F16));
        co_await TLOAD(bMat, GmTensor(bm, 0, 64, 256, 256, DType::F16));
        set_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
        wait_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
        TEXTRACT(aTile, aMat, 0, 64);
        TEXTRACT(bTile, bMat, 0, 0);
        set_flag(b, PIPE_MTE1, PIPE_M, 0);
        wait_flag(b, PIPE_MTE1, PIPE_M, 0);
        TMATMUL(cTile, aTile, bTile);
        TMATMUL_ACC(cTile, aTile, bTile);
        set_flag(b, PIPE_M, PIPE_FIX, 0);
        wait_flag(b, PIPE_M, PIPE_FIX, 0);
        co_await TSTORE(GmTensor(c, 0, 128, 256, 256, DType::F32), cTile);
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    const auto extracts = of(log, Opcode::TEXTRACT);
    const auto sets = of(log, Opcode::SET_FLAG);
    const auto waits = of(log, Opcode::WAIT_FLAG);
    const auto mm = of(log, Opcode::TMATMUL);
    const auto mma = of(log, Opcode::TMATMUL_ACC);
    const auto stores = of(log, Opcode::TSTORE);
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(extracts.size(), 2u);
    ASSERT_EQ(sets.size(), 3u);
    ASSERT_EQ(waits.size(), 3u);
    ASSERT_EQ(mm.size(), 1u);
    ASSERT_EQ(mma.size(), 1u);
    ASSERT_EQ(stores.size(), 1u);

    const SimTime k0 = h.launch_to_start();
    // MTE2: the loads queue back to back.
    EXPECT_EQ(loads[0].start, k0 + h.issue());
    EXPECT_NEAR(loads[0].end, loads[0].start + h.gm_move(128 * 256 * 2, p.pipes.gm_to_l1_gib_s), kTolPs);
    EXPECT_EQ(loads[1].start, loads[0].end);
    EXPECT_NEAR(loads[1].end, loads[1].start + h.gm_move(64 * 256 * 2, p.pipes.gm_to_l1_gib_s), kTolPs);
    // set_flag(MTE2 -> MTE1) fires once MTE2 has drained, plus its own cost; wait_flag releases
    // MTE1 one wait_flag cost later.
    EXPECT_EQ(sets[0].pipe, Pipe::MTE2);
    EXPECT_EQ(sets[0].start, loads[1].end + h.set_flag());
    EXPECT_EQ(waits[0].pipe, Pipe::MTE1);
    EXPECT_EQ(waits[0].start, sets[0].start + h.wait_flag());
    // MTE1: L0A at its rate in one load3Dv2, then L0B at its (different) rate in four load2D, one
    // per 16-row fractal row of the 64 x 256 fp16 slice (each paying the start-up latency).
    EXPECT_EQ(extracts[0].start, waits[0].start);
    EXPECT_NEAR(extracts[0].end - extracts[0].start, h.extract(128 * 64 * 2, p.pipes.l1_to_l0a_gib_s), kTolPs);
    EXPECT_EQ(extracts[1].start, extracts[0].end);
    EXPECT_NEAR(extracts[1].end - extracts[1].start, h.extract(64 * 256 * 2, p.pipes.l1_to_l0b_gib_s, 4), kTolPs);
    EXPECT_GT(p.pipes.mte1_latency_cycles, 0);  // so the four start-ups are told apart from one
    // Cube: 128 x 64 x 256 is the HARDWARE.md example, 6 + 8*4*16 = 518 cycles with the B1 numbers.
    EXPECT_EQ(sets[1].start, extracts[1].end + h.set_flag());
    EXPECT_EQ(waits[1].start, sets[1].start + h.wait_flag());
    EXPECT_EQ(mm[0].pipe, Pipe::M);
    EXPECT_EQ(mm[0].start, waits[1].start);
    EXPECT_EQ(mm[0].end - mm[0].start, h.cube(128, 64, 256));
    EXPECT_EQ(mm[0].bytes, 2LL * 128 * 64 * 256);  // FLOPs
    EXPECT_EQ(mma[0].start, mm[0].end);
    EXPECT_EQ(mma[0].end - mma[0].start, h.cube(128, 64, 256));
    // FIX: TSTORE from L0C. Its busy time (the record) is its L0C read and layout conversion;
    // the write drains at the L0C -> GM rate behind it, and the kernel ends when it has.
    EXPECT_EQ(sets[2].start, mma[0].end + h.set_flag());
    EXPECT_EQ(waits[2].start, sets[2].start + h.wait_flag());
    EXPECT_EQ(stores[0].pipe, Pipe::FIX);
    EXPECT_EQ(stores[0].start, waits[2].start);
    EXPECT_NEAR(stores[0].end - stores[0].start, h.gm_move(128 * 256 * 4, p.pipes.fix_l0c_read_gib_s), kTolPs);
    ASSERT_GT(p.pipes.fix_l0c_read_gib_s, p.pipes.l0c_to_gm_gib_s);  // so the two are told apart
    EXPECT_NEAR(run.stats.end, stores[0].start + h.gm_move(128 * 256 * 4, p.pipes.l0c_to_gm_gib_s), kTolPs);
}

TEST(InstructionCost, CubeCostRoundsPartialFractalsUp) {
    Hand h;
    Runtime rt(profile(), opts(1, DataMode::TimingOnly));
    // 100 x 72 x 40: ceil -> 7 x 5 x 3 = 105 fractals; 17 x 16 x 1: 2 x 1 x 1 = 2.
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& a = b.alloc_tile(MemKind::L0A, 100, 72, DType::F16, "a");
        Tile& bb = b.alloc_tile(MemKind::L0B, 72, 40, DType::F16, "b");
        Tile& c = b.alloc_tile(MemKind::L0C, 100, 40, DType::F32, "c");
        Tile& a2 = b.alloc_tile(MemKind::L0A, 17, 16, DType::F16, "a2");
        Tile& b2 = b.alloc_tile(MemKind::L0B, 16, 1, DType::F16, "b2");
        Tile& c2 = b.alloc_tile(MemKind::L0C, 17, 1, DType::F32, "c2");
        TMATMUL(c, a, bb);
        TMATMUL(c2, a2, b2);
        co_return;
    });
    const auto mm = of(rt.cluster().event_log(), Opcode::TMATMUL);
    ASSERT_EQ(mm.size(), 2u);
    EXPECT_EQ(mm[0].end - mm[0].start, h.cube(100, 72, 40));
    EXPECT_EQ(mm[1].end - mm[1].start, h.cube(17, 16, 1));
    EXPECT_EQ(h.cube(100, 72, 40), h.cyc(profile().pipes.cube_fixed_cycles + 105 / profile().pipes.cube_efficiency));
}

TEST(InstructionCost, TstoreFromUbRunsOnMte3AtTheUbToGmRate) {
    Hand h;
    Runtime rt(profile(), opts(1));
    GmAllocation& src = rt.host(0).malloc("src", 32 * 512 * 2);
    GmAllocation& dst = rt.host(0).malloc("dst", 32 * 512 * 2);
    fill_f16(src, 32 * 512, [](std::int64_t i) { return float(i % 100); });
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, 32, 512, DType::F16, "ub");
        co_await TLOAD(ub, GmTensor(src, 0, 32, 512, 512, DType::F16));
        set_flag(b, PIPE_MTE2, PIPE_MTE3, 1);
        wait_flag(b, PIPE_MTE2, PIPE_MTE3, 1);
        co_await TSTORE(GmTensor(dst, 0, 32, 512, 512, DType::F16), ub);
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    const auto stores = of(log, Opcode::TSTORE);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].pipe, Pipe::MTE3);
    EXPECT_EQ(stores[0].start, loads[0].end + h.set_flag() + h.wait_flag());
    EXPECT_NEAR(stores[0].end - stores[0].start, h.gm_move(32 * 512 * 2, profile().pipes.ub_to_gm_gib_s), kTolPs);
    EXPECT_EQ(std::memcmp(src.data.data(), dst.data.data(), src.data.size()), 0);
}

TEST(InstructionCost, FlagFromScalarAndWaitOnScalar) {
    // set_flag from PIPE_S is set at issue; wait_flag on PIPE_S stalls the scalar itself, so the
    // next instruction issues only after it.
    Hand h;
    Runtime rt(profile(), opts(1, DataMode::TimingOnly));
    GmAllocation& a = rt.host(0).malloc("A", 16 * 256 * 2);
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "ub");
        co_await TLOAD(ub, GmTensor(a, 0, 16, 256, 256, DType::F16));
        set_flag(b, PIPE_MTE2, PIPE_S, 2);
        wait_flag(b, PIPE_MTE2, PIPE_S, 2);
        set_flag(b, PIPE_S, PIPE_MTE3, 3);
        wait_flag(b, PIPE_S, PIPE_MTE3, 3);
        co_await TLOAD(ub, GmTensor(a, 0, 16, 256, 256, DType::F16));
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    const auto sets = of(log, Opcode::SET_FLAG);
    const auto waits = of(log, Opcode::WAIT_FLAG);
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(sets.size(), 2u);
    ASSERT_EQ(waits.size(), 2u);
    EXPECT_EQ(sets[0].start, loads[0].end + h.set_flag());
    EXPECT_EQ(waits[0].pipe, Pipe::S);
    EXPECT_EQ(waits[0].start, sets[0].start + h.wait_flag());
    // The scalar resumed at waits[0]: set_flag(S -> MTE3) is set when issued, one issue later.
    EXPECT_EQ(sets[1].start, waits[0].start + h.issue());
    // The second TLOAD issues after set_flag and wait_flag (two more issues), MTE2 being idle.
    EXPECT_EQ(loads[1].start, waits[0].start + 3 * h.issue());
}

TEST(InstructionCost, PipeBarrierDrainsOnePipeOrAll) {
    Hand h;
    Runtime rt(profile(), opts(1, DataMode::TimingOnly));
    GmAllocation& a = rt.host(0).malloc("A", 64 * 256 * 2);
    auto run = test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "ub");
        Tile& ub2 = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "ub2");
        co_await TLOAD(ub, GmTensor(a, 0, 64, 256, 256, DType::F16));
        pipe_barrier(b, PIPE_MTE2);  // MTE2 takes nothing new before the load is done + barrier
        co_await TLOAD(ub2, GmTensor(a, 0, 64, 256, 256, DType::F16));
        pipe_barrier(b, PIPE_ALL);   // the scalar too waits for every pipe
        co_await TSTORE(GmTensor(a, 0, 64, 256, 256, DType::F16), ub2);
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    const auto bars = of(log, Opcode::PIPE_BARRIER);
    const auto stores = of(log, Opcode::TSTORE);
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(bars.size(), 2u);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(bars[0].pipe, Pipe::MTE2);
    EXPECT_EQ(bars[0].end, loads[0].end + h.barrier());
    EXPECT_EQ(loads[1].start, bars[0].end);
    EXPECT_EQ(bars[1].end, loads[1].end + h.barrier());
    EXPECT_EQ(stores[0].start, bars[1].end + h.issue());
    EXPECT_EQ(run.stats.end, stores[0].end);
}

// TNOTIFY to the own rank becomes visible after the local atomic latency; a TWAIT on it in the
// same block resumes one poll after that.
TEST(InstructionCost, LocalNotifyVisibleAfterLocalAtomicLatency) {
    Hand h;
    Runtime rt(profile(), opts(1));
    GmAllocation& sig = rt.cluster().chip(0).gm.allocate("sig", 64, true);
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        TNOTIFY(b, SignalAddr{0, sig.base + 4}, 3, NotifyOp::Set);
        co_await TWAIT(b, SignalAddr{0, sig.base + 4}, CmpOp::EQ, 3);
    });
    const auto log = rt.cluster().event_log();
    const auto notes = of(log, Opcode::TNOTIFY);
    const auto waits = of(log, Opcode::TWAIT);
    ASSERT_EQ(notes.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    const SimTime issued = h.launch_to_start() + h.issue();
    EXPECT_EQ(notes[0].end, issued);
    EXPECT_EQ(notes[0].visible, issued + h.local_atomic());
    EXPECT_EQ(notes[0].peer, 0);
    EXPECT_EQ(waits[0].end, notes[0].visible + h.poll());
}

// ============================================================ 2. overlap ===================

TEST(PipeOverlap, LoadOnMte2AndStoreOnMte3RunTogether) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(1));
    GmAllocation& x = rt.host(0).malloc("X", 64 * 256 * 2);
    GmAllocation& y = rt.host(0).malloc("Y", 64 * 256 * 2);
    auto run = test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& in = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "in");
        Tile& out = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "out");
        co_await TLOAD(in, GmTensor(x, 0, 64, 256, 256, DType::F16));
        co_await TSTORE(GmTensor(y, 0, 64, 256, 256, DType::F16), out);
    });
    const auto log = rt.cluster().event_log();
    const auto load = of(log, Opcode::TLOAD).at(0);
    const auto store = of(log, Opcode::TSTORE).at(0);
    const SimTime k0 = h.launch_to_start();
    const SimTime tl = h.gm_move(64 * 256 * 2, p.pipes.gm_to_ub_gib_s);
    const SimTime ts = h.gm_move(64 * 256 * 2, p.pipes.ub_to_gm_gib_s);
    EXPECT_EQ(load.start, k0 + h.issue());
    EXPECT_EQ(store.start, k0 + 2 * h.issue());  // does not wait for MTE2
    EXPECT_LT(store.start, load.end);
    EXPECT_NEAR(load.end - load.start, tl, kTolPs);
    EXPECT_NEAR(store.end - store.start, ts, kTolPs);
    // The block takes the longer of the two, not their sum.
    EXPECT_NEAR(run.stats.end - k0, std::max(h.issue() + tl, 2 * h.issue() + ts), kTolPs);
}

TEST(PipeOverlap, TwoLoadsOnOnePipeSerialize) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(1));
    GmAllocation& x = rt.host(0).malloc("X", 64 * 256 * 2);
    auto run = test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& u0 = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "u0");
        Tile& u1 = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "u1");
        co_await TLOAD(u0, GmTensor(x, 0, 64, 256, 256, DType::F16));
        co_await TLOAD(u1, GmTensor(x, 0, 64, 256, 256, DType::F16));
    });
    const auto loads = of(rt.cluster().event_log(), Opcode::TLOAD);
    ASSERT_EQ(loads.size(), 2u);
    const SimTime tl = h.gm_move(64 * 256 * 2, p.pipes.gm_to_ub_gib_s);
    EXPECT_EQ(loads[1].start, loads[0].end);
    EXPECT_NEAR(run.stats.end - h.launch_to_start(), h.issue() + 2 * tl, 2 * kTolPs);
}

// The hardware moves of a TEXTRACT: one load3Dv2 into L0A whatever its size; into L0B one load2D
// per fractal row of K, a fractal row being 32 bytes deep (16 fp16, 32 int8, 8 fp32 values).
TEST(InstructionCost, ExtractIntoL0BIsOneLoad2DPerFractalRowOfK) {
    const auto moves = [](MemKind kind, int rows, DType dtype) {
        Tile t;
        t.kind = kind;
        t.rows = rows;
        t.cols = 256;
        t.dtype = dtype;
        return textract_hardware_moves(t);
    };
    EXPECT_EQ(moves(MemKind::L0A, 128, DType::F16), 1);
    EXPECT_EQ(moves(MemKind::L0B, 64, DType::F16), 4);   // the published GEMM's 4 x load_cbuf_to_cb
    EXPECT_EQ(moves(MemKind::L0B, 128, DType::I8), 4);   // 128-deep int8: 4 fractal rows of 32
    EXPECT_EQ(moves(MemKind::L0B, 16, DType::F32), 2);   // fp32 fractals are 8 deep
    EXPECT_EQ(moves(MemKind::L0B, 8, DType::F16), 1);    // a partial fractal row is still one move
}

TEST(PipeOverlap, CubeCoreLoadsNextL1BufferWhileExtractingThePrevious) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(1));
    GmAllocation& x = rt.host(0).malloc("X", 128 * 128 * 2);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& ping = b.alloc_tile(MemKind::L1, 128, 128, DType::F16, "ping");
        Tile& pong = b.alloc_tile(MemKind::L1, 128, 128, DType::F16, "pong");
        Tile& a0 = b.alloc_tile(MemKind::L0A, 128, 128, DType::F16, "a0");
        co_await TLOAD(ping, GmTensor(x, 0, 128, 128, 128, DType::F16));
        set_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
        co_await TLOAD(pong, GmTensor(x, 0, 128, 128, 128, DType::F16));  // MTE2
        wait_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
        TEXTRACT(a0, ping, 0, 0);                                          // MTE1, meanwhile
    });
    const auto log = rt.cluster().event_log();
    const auto loads = of(log, Opcode::TLOAD);
    const auto ex = of(log, Opcode::TEXTRACT).at(0);
    ASSERT_EQ(loads.size(), 2u);
    const SimTime flag_set = loads[0].end + h.set_flag();
    EXPECT_EQ(loads[1].start, flag_set);  // set_flag took one cycle of MTE2
    EXPECT_EQ(ex.start, flag_set + h.wait_flag());
    EXPECT_LT(ex.start, loads[1].end);  // the extract runs while the second load is in flight
    EXPECT_NEAR(ex.end - ex.start, h.extract(128 * 128 * 2, p.pipes.l1_to_l0a_gib_s), kTolPs);
}

// ============================================================ 3. double buffering ==========

// C (m x n, fp32) = A (m x K) * B (K x n), K in `steps` slices of kt, in the Ascend style: L1 and
// L0 buffers, set_flag/wait_flag between MTE2, MTE1 and M, TSTORE of the accumulator via FIX.
struct ToyGemm {
    static constexpr int m = 128, n = 256, kt = 64, steps = 8, K = kt * steps;
    bool double_buffered;
    GmAllocation* a = nullptr;
    GmAllocation* b = nullptr;
    GmAllocation* c = nullptr;

    Task operator()(BlockCtx& blk) const {
        const int nbuf = double_buffered ? 2 : 1;
        Tile* aL1[2];
        Tile* bL1[2];
        Tile* aL0[2];
        Tile* bL0[2];
        for (int i = 0; i < nbuf; ++i) {
            aL1[i] = &blk.alloc_tile(MemKind::L1, m, kt, DType::F16, "aMat" + std::to_string(i));
            bL1[i] = &blk.alloc_tile(MemKind::L1, kt, n, DType::F16, "bMat" + std::to_string(i));
            aL0[i] = &blk.alloc_tile(MemKind::L0A, m, kt, DType::F16, "aTile" + std::to_string(i));
            bL0[i] = &blk.alloc_tile(MemKind::L0B, kt, n, DType::F16, "bTile" + std::to_string(i));
        }
        Tile& acc = blk.alloc_tile(MemKind::L0C, m, n, DType::F32, "cTile");
        const GmTensor A(*a, 0, m, K, K, DType::F16);
        const GmTensor B(*b, 0, K, n, n, DType::F16);
        if (double_buffered) {
            for (int i = 0; i < 2; ++i) {  // every buffer starts free
                set_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
                set_flag(blk, PIPE_M, PIPE_MTE1, i);
            }
        }
        for (int k = 0; k < steps; ++k) {
            const int p = double_buffered ? k % 2 : 0;
            if (double_buffered || k > 0) wait_flag(blk, PIPE_MTE1, PIPE_MTE2, p);  // L1[p] free
            co_await TLOAD(*aL1[p], A.sub(0, k * kt, m, kt));
            co_await TLOAD(*bL1[p], B.sub(k * kt, 0, kt, n));
            set_flag(blk, PIPE_MTE2, PIPE_MTE1, p);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE1, p);
            if (double_buffered || k > 0) wait_flag(blk, PIPE_M, PIPE_MTE1, p);  // L0[p] free
            TEXTRACT(*aL0[p], *aL1[p], 0, 0);
            TEXTRACT(*bL0[p], *bL1[p], 0, 0);
            if (double_buffered || k + 1 < steps) set_flag(blk, PIPE_MTE1, PIPE_MTE2, p);
            set_flag(blk, PIPE_MTE1, PIPE_M, p);
            wait_flag(blk, PIPE_MTE1, PIPE_M, p);
            if (k == 0) TMATMUL(acc, *aL0[p], *bL0[p]);
            else TMATMUL_ACC(acc, *aL0[p], *bL0[p]);
            if (double_buffered || k + 1 < steps) set_flag(blk, PIPE_M, PIPE_MTE1, p);
        }
        if (double_buffered) {  // drain the ping-pong flags
            for (int i = 0; i < 2; ++i) {
                wait_flag(blk, PIPE_MTE1, PIPE_MTE2, i);
                wait_flag(blk, PIPE_M, PIPE_MTE1, i);
            }
        }
        set_flag(blk, PIPE_M, PIPE_FIX, 0);
        wait_flag(blk, PIPE_M, PIPE_FIX, 0);
        co_await TSTORE(GmTensor(*c, 0, m, n, n, DType::F32), acc);
    }
};

struct GemmRun {
    SimTime first_load = 0;
    SimTime last_matmul_end = 0;
    SimTime store_start = 0;
    SimTime kernel_end = 0;
    std::vector<float> c;
};

float a_val(std::int64_t i, std::int64_t j) { return float((i * 7 + j * 3) % 17 - 8) / 8.0f; }
float b_val(std::int64_t i, std::int64_t j) { return float((i * 5 + j * 11) % 13 - 6) / 8.0f; }

GemmRun run_gemm(bool double_buffered) {
    using G = ToyGemm;
    Runtime rt(profile(), opts(1));
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{G::m} * G::K * 2);
    GmAllocation& b = rt.host(0).malloc("B", std::int64_t{G::K} * G::n * 2);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{G::m} * G::n * 4);
    fill_f16(a, std::int64_t{G::m} * G::K, [](std::int64_t x) { return a_val(x / G::K, x % G::K); });
    fill_f16(b, std::int64_t{G::K} * G::n, [](std::int64_t x) { return b_val(x / G::n, x % G::n); });
    ToyGemm kernel{double_buffered, &a, &b, &c};
    auto run = test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) { return kernel(blk); });
    const auto log = rt.cluster().event_log();
    GemmRun out;
    out.first_load = of(log, Opcode::TLOAD).at(0).start;
    out.last_matmul_end = of(log, Opcode::TMATMUL_ACC).back().end;
    out.store_start = of(log, Opcode::TSTORE).at(0).start;
    out.kernel_end = run.stats.end;
    for (std::int64_t i = 0; i < std::int64_t{G::m} * G::n; ++i) out.c.push_back(read_f32(c, i));
    return out;
}

TEST(DoubleBuffering, ToyGemmPipelinesByTheExpectedAmount) {
    using G = ToyGemm;
    Hand h;
    const Profile& p = profile();
    // Per-step stage costs from the profile.
    const SimTime t2 = h.gm_move(G::m * G::kt * 2, p.pipes.gm_to_l1_gib_s) +  // MTE2: A and B slices
                       h.gm_move(G::kt * G::n * 2, p.pipes.gm_to_l1_gib_s);
    const SimTime t1 = h.extract(G::m * G::kt * 2, p.pipes.l1_to_l0a_gib_s) +  // MTE1: B in 4 load2D
                       h.extract(G::kt * G::n * 2, p.pipes.l1_to_l0b_gib_s, G::kt / 16);
    const SimTime tm = h.cube(G::m, G::kt, G::n);                            // M
    const SimTime S = G::steps;
    // Single-buffered: the next load waits for the extract to free L1, the next extract for the
    // cube to free L0, so a step costs max(MTE2, M) + MTE1 and only the cube overlaps.
    const SimTime single = S * (std::max(t2, tm) + t1) - std::max(t2, tm) + t2 + tm;
    // Double-buffered: a step costs the slowest stage; the others show only as fill and drain.
    const SimTime slowest = std::max({t2, t1, tm});
    const SimTime dbl = t2 + t1 + tm + (S - 1) * slowest;
    // On top of these the flags cost time on the pipes: a set_flag occupies its source pipe, a
    // wait_flag its destination. The longest chain of them in one step is the single-buffered
    // hand-off extract -> set(MTE1->MTE2) -> wait -> loads -> set(MTE2->MTE1) -> wait ->
    // wait(M->MTE1) -> extract: 2 set_flag + 3 wait_flag. Allow that per step, plus fill/drain.
    const SimTime sync_per_step = 2 * h.set_flag() + 3 * h.wait_flag();
    const SimTime tol = (S + 2) * sync_per_step;
    ASSERT_GT(single - dbl, 10 * tol) << "the profile's stage costs make the comparison meaningless";

    const GemmRun s = run_gemm(false);
    const GemmRun d = run_gemm(true);
    EXPECT_NEAR(s.last_matmul_end - s.first_load, single, tol);
    EXPECT_NEAR(d.last_matmul_end - d.first_load, dbl, tol);
    EXPECT_NEAR((s.kernel_end - d.kernel_end), single - dbl, 2 * tol);
    // The accumulator leaves through FIX at the same cost in both.
    EXPECT_EQ(s.kernel_end - s.store_start, d.kernel_end - d.store_start);

    // Functionally both are the product; with these values every partial sum is exact in fp32.
    for (int i = 0; i < G::m; ++i) {
        for (int j = 0; j < G::n; ++j) {
            double ref = 0;
            for (int k = 0; k < G::K; ++k) ref += double(a_val(i, k)) * double(b_val(k, j));
            ASSERT_EQ(s.c[std::size_t(i) * G::n + j], float(ref)) << "single-buffered C(" << i << "," << j << ")";
            ASSERT_EQ(d.c[std::size_t(i) * G::n + j], float(ref)) << "double-buffered C(" << i << "," << j << ")";
        }
    }
}

// ============================================================ 4. cross-rank ================

TEST(CrossRank, TputAndNotifyThenTwaitGivesDataAndResumeTime) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(2));
    constexpr int rows = 32, cols = 256;
    constexpr std::int64_t bytes = rows * cols * 2;
    GmAllocation& src = rt.host(0).malloc("src", bytes);
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 64, /*shared=*/true);
    GmAllocation& out = rt.host(1).malloc("out", bytes);
    fill_f16(src, rows * cols, [](std::int64_t i) { return float(i % 1000) - 500.0f; });
    const SignalAddr flag{1, flags.base + 8};
    rt.run_hosts([&](HostContext& host) {
        Stream& comm = host.create_stream("comm");
        if (host.rank() == 0) {
            comm.launch(KernelLaunch{"put", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
                co_await TPUT(GmTensor(win, 0, rows, cols, cols, DType::F16), GmTensor(src, 0, rows, cols, cols, DType::F16), ub);
                TNOTIFY(b, flag, 1, NotifyOp::AtomicAdd);
            }});
        } else {
            comm.launch(KernelLaunch{"wait", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
                co_await TWAIT(b, flag, CmpOp::GE, 1);
                // Read the window after the wait: the data must be there by then.
                co_await TLOAD(ub, GmTensor(win, 0, rows, cols, cols, DType::F16));
                set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                co_await TSTORE(GmTensor(out, 0, rows, cols, cols, DType::F16), ub);
            }});
        }
        comm.synchronize();
    });
    const auto log = rt.cluster().event_log();
    // Rank 0: the TPUT is a local TLOAD on MTE2, then a store into the peer's window on MTE3 at
    // the remote store rate, plus one link hop (full mesh).
    const auto loads0 = of(log, Opcode::TLOAD, 0);
    const auto stores0 = of(log, Opcode::TSTORE, 0);
    const auto notes = of(log, Opcode::TNOTIFY, 0);
    ASSERT_EQ(loads0.size(), 1u);
    ASSERT_EQ(stores0.size(), 1u);
    ASSERT_EQ(notes.size(), 1u);
    const SimTime k0 = h.launch_to_start();
    EXPECT_EQ(loads0[0].start, k0 + h.issue());
    EXPECT_NEAR(loads0[0].end - loads0[0].start, h.gm_move(bytes, p.pipes.gm_to_ub_gib_s), kTolPs);
    EXPECT_EQ(stores0[0].start, loads0[0].end + h.issue());  // serial: load, wait, store
    EXPECT_EQ(stores0[0].peer, 1);
    EXPECT_EQ(stores0[0].pipe, Pipe::MTE3);
    // One contiguous run: one burst's cost beside the bytes (sim/MODEL.md "One core's remote
    // traffic"), at most at the link's rate, which the route's link caps.
    const CostModel cost(p);
    const std::int64_t link_bps = std::llround(p.interconnect.link_gb_s * 1e9);
    const std::int64_t rate_bps = std::min(cost.remote_store_rate_bps(bytes, 1), link_bps);
    EXPECT_NEAR(stores0[0].end - stores0[0].start, h.gm_lat() + cost.transfer_ps(bytes, rate_bps) + h.link_lat(), kTolPs);
    EXPECT_GE(h.gm_lat() + cost.transfer_ps(bytes, cost.remote_store_rate_bps(bytes, 1)),
              h.gm_move(bytes, p.interconnect.remote_store_gib_s));
    // The notify issues once the store is done and is visible a remote atomic latency later.
    EXPECT_EQ(notes[0].end, stores0[0].end + h.issue());
    EXPECT_EQ(notes[0].visible, notes[0].end + h.remote_atomic());
    EXPECT_EQ(notes[0].peer, 1);
    EXPECT_EQ(notes[0].address, flag.address);
    // Rank 1: the TWAIT, issued long before, resumes exactly one poll after the notify is visible.
    const auto waits = of(log, Opcode::TWAIT, 1);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_LT(waits[0].start, notes[0].visible);
    EXPECT_EQ(waits[0].end, notes[0].visible + h.poll());
    const auto loads1 = of(log, Opcode::TLOAD, 1);
    ASSERT_EQ(loads1.size(), 1u);
    EXPECT_EQ(loads1[0].start, waits[0].end + h.issue());
    // Functional: the window and the copy rank 1 made after the wait both hold the data.
    EXPECT_EQ(std::memcmp(win.data.data(), src.data.data(), bytes), 0);
    EXPECT_EQ(std::memcmp(out.data.data(), src.data.data(), bytes), 0);
}

// One AIV block of `kernel` on rank 0's stream, the run's log back.
std::vector<InstrRecord> run_one_block_on_rank0(Runtime& rt, std::function<Task(BlockCtx&)> kernel) {
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"one_block", CoreType::AIV, 1, kernel});
        s.synchronize();
    });
    return rt.cluster().event_log();
}

// dsb: after pipe_barrier(PIPE_ALL) has waited for a remote store to land, the scalar waits
// for the store's acknowledgement, a route's latency back; a dsb with no remote write
// outstanding (the second one here, and one after a local store) costs its fixed cost only.
TEST(CrossRank, DsbWaitsForARemoteWritesAcknowledgement) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(2, DataMode::TimingOnly));
    constexpr int rows = 16, cols = 256;
    constexpr std::int64_t bytes = rows * cols * 2;
    GmAllocation& local = rt.host(0).malloc("local", bytes);
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
    const auto log = run_one_block_on_rank0(rt, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
        co_await TSTORE(GmTensor(local, 0, rows, cols, cols, DType::F16), ub);
        pipe_barrier(b, PIPE_ALL);
        dsb(b);  // nothing remote yet
        co_await TSTORE(GmTensor(win, 0, rows, cols, cols, DType::F16), ub);
        pipe_barrier(b, PIPE_ALL);
        dsb(b);  // the store's response
        dsb(b);  // nothing left
    });
    const auto stores = of(log, Opcode::TSTORE);
    const auto bars = of(log, Opcode::PIPE_BARRIER);
    const auto fences = of(log, Opcode::DSB);
    ASSERT_EQ(stores.size(), 2u);
    ASSERT_EQ(bars.size(), 2u);
    ASSERT_EQ(fences.size(), 3u);
    EXPECT_EQ(stores[1].peer, 1);
    EXPECT_EQ(fences[0].pipe, Pipe::S);
    EXPECT_EQ(fences[0].end, bars[0].end + h.issue() + h.barrier());
    EXPECT_EQ(bars[1].end, stores[1].end + h.barrier());
    EXPECT_EQ(fences[1].start, bars[1].end + h.issue());
    EXPECT_EQ(fences[1].end, stores[1].end + h.link_lat() + h.barrier());  // the full mesh: one hop back
    EXPECT_EQ(fences[2].end, fences[1].end + h.issue() + h.barrier());
}

// Posted remote stores (interconnect.remote_write_window_bytes): the MTE3 is free once the last
// byte has left, at most window / round trip; the bytes land a route's latency later, and a dsb
// waits for their response a route's latency after that. Two stores back to back: the second
// starts when the first's last byte has left, not when it lands.
TEST(CrossRank, PostedStoresFreeTheirPipeBeforeTheyLandAndMoveAtMostAWindowPerRoundTrip) {
    Hand h;
    Profile p = profile();
    p.interconnect.remote_write_window_bytes = 2048;
    Runtime rt(p, opts(2, DataMode::TimingOnly));
    constexpr int rows = 16, cols = 256;
    constexpr std::int64_t bytes = rows * cols * 2;
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", 2 * bytes, /*shared=*/true);
    const auto log = run_one_block_on_rank0(rt, [&](BlockCtx& b) -> Task {
        Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
        co_await TSTORE(GmTensor(win, 0, rows, cols, cols, DType::F16), ub);
        co_await TSTORE(GmTensor(win, bytes, rows, cols, cols, DType::F16), ub);
        pipe_barrier(b, PIPE_ALL);
        dsb(b);
    });
    const auto stores = of(log, Opcode::TSTORE);
    const auto bars = of(log, Opcode::PIPE_BARRIER);
    const auto fences = of(log, Opcode::DSB);
    ASSERT_EQ(stores.size(), 2u);
    ASSERT_EQ(bars.size(), 1u);
    ASSERT_EQ(fences.size(), 1u);
    // The window binds: 2048 B per read round trip, below the store's own rate and the link's.
    const CostModel cost(p);
    const std::int64_t window_bps = cost.remote_write_rate_bps(cost.remote_read_round_trip_ps);
    ASSERT_LT(window_bps, cost.remote_store_rate_bps(bytes, 1));
    ASSERT_LT(window_bps, std::llround(p.interconnect.link_gb_s * 1e9));
    const SimTime moving = h.gm_lat() + cost.transfer_ps(bytes, window_bps);
    EXPECT_NEAR(stores[0].end - stores[0].start, moving, kTolPs);  // no route latency: posted
    EXPECT_EQ(stores[1].start, stores[0].end);  // the pipe is free when the bytes have left
    EXPECT_NEAR(stores[1].end - stores[1].start, moving, kTolPs);
    EXPECT_EQ(bars[0].end, stores[1].end + h.barrier());
    // The last store lands a hop after it left and its response is back a hop later.
    EXPECT_EQ(fences[0].end, stores[1].end + 2 * h.link_lat() + h.barrier());
}

// A payload share below 1 (interconnect.write_payload_share, read_payload_share): a transfer books
// bytes / share on its links, so where the link binds its payload moves at link x share; where
// the core's own rate binds nothing changes. One contiguous store (link-bound on the full mesh:
// one core's store of a whole run is above a link), then one remote read (bound by the core's
// read window below a link, and by the link once the read's share is small enough).
TEST(CrossRank, PayloadSharesSlowTransfersOnlyWhereTheLinksBind) {
    Hand h;
    constexpr int rows = 16, cols = 256;
    constexpr std::int64_t bytes = rows * cols * 2;
    const auto run = [&](double write_share, double read_share) {
        Profile p = profile();
        p.interconnect.write_payload_share = write_share;
        p.interconnect.read_payload_share = read_share;
        Runtime rt(p, opts(2, DataMode::TimingOnly));
        GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
        const auto log = run_one_block_on_rank0(rt, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
            co_await TSTORE(GmTensor(win, 0, rows, cols, cols, DType::F16), ub);
            pipe_barrier(b, PIPE_ALL);
            co_await TLOAD(ub, GmTensor(win, 0, rows, cols, cols, DType::F16));
        });
        const auto stores = of(log, Opcode::TSTORE);
        const auto loads = of(log, Opcode::TLOAD);
        EXPECT_EQ(stores.size(), 1u);
        EXPECT_EQ(loads.size(), 1u);
        return std::pair{stores.at(0).end - stores.at(0).start, loads.at(0).end - loads.at(0).start};
    };
    const Profile& p = profile();
    const CostModel cost(p);
    const std::int64_t link_bps = std::llround(p.interconnect.link_gb_s * 1e9);
    ASSERT_GT(cost.remote_store_rate_bps(bytes, 1), link_bps);  // the store is link-bound
    const SimTime read_floor = cost.transfer_ps(bytes, cost.remote_read_rate_bps(cost.remote_read_round_trip_ps));
    const auto [store_full, load_full] = run(1.0, 1.0);
    const auto [store_half, load_half] = run(0.5, 0.5);
    const auto [store_same, load_small] = run(1.0, 0.1);
    // The store: its bytes at half the link's rate.
    EXPECT_NEAR(store_full, h.gm_lat() + cost.transfer_ps(bytes, link_bps) + h.link_lat(), kTolPs);
    EXPECT_NEAR(store_half, h.gm_lat() + cost.transfer_ps(bytes, link_bps / 2) + h.link_lat(), kTolPs);
    EXPECT_EQ(store_same, store_full);
    // The read: its window binds below half a link; a tenth of a link binds it.
    ASSERT_LT(cost.remote_read_rate_bps(cost.remote_read_round_trip_ps), link_bps / 2);
    EXPECT_EQ(load_half, load_full);
    EXPECT_NEAR(load_small, h.gm_lat() + cost.transfer_ps(bytes, link_bps / 10), kTolPs);
    EXPECT_GT(load_small, h.gm_lat() + read_floor);
}

// TGET: a remote read of the peer's window over the link (MTE2), then a local store (MTE3).
TEST(CrossRank, TgetReadsThePeerWindowOverTheLink) {
    Hand h;
    const Profile& p = profile();
    Runtime rt(p, opts(2));
    constexpr int rows = 16, cols = 512;
    constexpr std::int64_t bytes = rows * cols * 2;
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
    GmAllocation& dst = rt.host(0).malloc("dst", bytes);
    fill_f16(win, rows * cols, [](std::int64_t i) { return float(i % 77) * 0.5f; });
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"get", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
            co_await TGET(GmTensor(dst, 0, rows, cols, cols, DType::F16), GmTensor(win, 0, rows, cols, cols, DType::F16), ub);
        }});
        s.synchronize();
    });
    const auto log = rt.cluster().event_log();
    const auto load = of(log, Opcode::TLOAD).at(0);
    const auto store = of(log, Opcode::TSTORE).at(0);
    EXPECT_EQ(load.peer, 1);
    EXPECT_EQ(load.start, h.launch_to_start() + h.issue());
    // A remote read longer than the core's window: the window's bytes per round trip (a read's
    // round trip, not a store's route latency).
    const double window = static_cast<double>(p.interconnect.remote_read_window_bytes);
    ASSERT_GT(static_cast<double>(bytes), window);
    EXPECT_NEAR(load.end - load.start,
                h.gm_lat() + from_ns(p.interconnect.remote_read_round_trip_ns * static_cast<double>(bytes) / window), kTolPs);
    EXPECT_EQ(store.peer, -1);
    EXPECT_EQ(store.start, load.end + h.issue());
    EXPECT_NEAR(store.end - store.start, h.gm_move(bytes, p.pipes.ub_to_gm_gib_s), kTolPs);
    EXPECT_EQ(std::memcmp(dst.data.data(), win.data.data(), bytes), 0);
}

// A remote read within the core's window has all its requests in flight at once: it takes one
// round trip whatever its size (sim/MODEL.md "One core's remote traffic").
TEST(CrossRank, RemoteReadWithinTheWindowTakesOneRoundTrip) {
    Hand h;
    const Profile& p = profile();
    for (const int rows : {1, 2}) {
        Runtime rt(p, opts(2));
        constexpr int cols = 256;
        const std::int64_t bytes = std::int64_t{rows} * cols * 2;
        ASSERT_LE(bytes, p.interconnect.remote_read_window_bytes);
        GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
        rt.run_hosts([&](HostContext& host) {
            if (host.rank() != 0) return;
            Stream& s = host.create_stream("comm");
            s.launch(KernelLaunch{"get", CoreType::AIV, 1, [&, rows](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
                co_await TLOAD(ub, GmTensor(win, 0, rows, cols, cols, DType::F16));
            }});
            s.synchronize();
        });
        const auto load = of(rt.cluster().event_log(), Opcode::TLOAD).at(0);
        EXPECT_EQ(load.peer, 1);
        EXPECT_NEAR(load.end - load.start, h.gm_lat() + from_ns(p.interconnect.remote_read_round_trip_ns), kTolPs) << rows;
    }
}

// A launch marked timing_only in a functional cluster is timed exactly like a data launch but
// moves nothing (what the host program's timed-only benchmark views rely on).
TEST(CrossRank, TimingOnlyLaunchMovesNoDataAndTakesTheSameTime) {
    Runtime rt(profile(), opts(2));
    constexpr int rows = 16, cols = 512;
    constexpr std::int64_t bytes = rows * cols * 2;
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", bytes, /*shared=*/true);
    GmAllocation& dst = rt.host(0).malloc("dst", bytes);
    fill_f16(win, rows * cols, [](std::int64_t i) { return float(i % 77) * 0.5f + 1.0f; });
    const std::vector<std::byte> zeros(static_cast<std::size_t>(bytes));
    bool untouched_after_timed = false;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        KernelLaunch get{"get", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, rows, cols, DType::F16, "ub");
            EXPECT_EQ(ub.data == nullptr, !b.functional());
            co_await TGET(GmTensor(dst, 0, rows, cols, cols, DType::F16), GmTensor(win, 0, rows, cols, cols, DType::F16), ub);
        }};
        KernelLaunch timed = get;
        timed.timing_only = true;
        s.launch(timed);
        s.synchronize();
        untouched_after_timed = std::memcmp(dst.data.data(), zeros.data(), zeros.size()) == 0;
        s.launch(get);
        s.synchronize();
    });
    EXPECT_TRUE(untouched_after_timed);
    EXPECT_EQ(std::memcmp(dst.data.data(), win.data.data(), bytes), 0);
    const auto loads = of(rt.cluster().event_log(), Opcode::TLOAD);
    const auto stores = of(rt.cluster().event_log(), Opcode::TSTORE);
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(stores.size(), 2u);
    EXPECT_EQ(loads[0].end - loads[0].start, loads[1].end - loads[1].start);
    EXPECT_EQ(stores[0].end - stores[0].start, stores[1].end - stores[1].start);
    EXPECT_EQ(stores[0].end - loads[0].start, stores[1].end - loads[1].start);
}

// Two notifies from two blocks: a TWAIT for the sum resumes after the later one only; a TWAIT
// issued after the condition already holds costs one poll.
TEST(CrossRank, TwaitResolvesWhenTheConditionFirstHolds) {
    Hand h;
    Runtime rt(profile(), opts(2, DataMode::TimingOnly));
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 64, true);
    const SignalAddr flag{1, flags.base};
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        if (host.rank() == 0) {
            s.launch(KernelLaunch{"notify", CoreType::AIV, 2, [&](BlockCtx& b) -> Task {
                // Block 1 notifies later: it first spends 3 barriers.
                for (int i = 0; i < 3 * b.block_idx(); ++i) pipe_barrier(b, PIPE_ALL);
                TNOTIFY(b, flag, 1, NotifyOp::AtomicAdd);
                co_return;
            }});
        } else {
            s.launch(KernelLaunch{"wait", CoreType::AIV, 2, [&](BlockCtx& b) -> Task {
                if (b.block_idx() == 0) {
                    co_await TWAIT(b, flag, CmpOp::EQ, 2);
                } else {
                    co_await TWAIT(b, flag, CmpOp::GE, 1);
                    // Late check: by now the sum is 2.
                    for (int i = 0; i < 40; ++i) pipe_barrier(b, PIPE_ALL);
                    co_await TWAIT(b, flag, CmpOp::EQ, 2);
                }
            }});
        }
        s.synchronize();
    });
    const auto log = rt.cluster().event_log();
    const auto notes = of(log, Opcode::TNOTIFY, 0);
    ASSERT_EQ(notes.size(), 2u);
    const SimTime first = std::min(notes[0].visible, notes[1].visible);
    const SimTime second = std::max(notes[0].visible, notes[1].visible);
    EXPECT_EQ(second - first, 3 * (h.issue() + h.barrier()));
    std::vector<InstrRecord> w0, w1;
    for (const auto& r : of(log, Opcode::TWAIT, 1)) (r.block == 0 ? w0 : w1).push_back(r);
    ASSERT_EQ(w0.size(), 1u);
    ASSERT_EQ(w1.size(), 2u);
    EXPECT_EQ(w0[0].end, second + h.poll());
    EXPECT_EQ(w1[0].end, first + h.poll());
    EXPECT_GT(w1[1].start, second);
    EXPECT_EQ(w1[1].end, w1[1].start + h.issue() + h.poll());
}

// A stream whose only block waits in TWAIT is not woken for the windows in which nothing it waits
// on changes: the coordinator releases it for the window in which the notify becomes visible (and
// the one right after it started waiting), and the TWAIT still resolves at the exact time.
TEST(CrossRank, WaitingStreamSleepsThroughWindowsAndStillResumesOnTime) {
    Hand h;
    Runtime rt(profile(), opts(2, DataMode::TimingOnly));
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 64, true);
    const SignalAddr flag{1, flags.base};
    // Each load touches the GM fabric (shared state), so the busy stream advances window by window.
    constexpr int kLoads = 200;
    GmAllocation& src = rt.host(0).malloc("src", 16 * 256 * 2);
    std::array<std::int64_t, 2> windows{};
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        if (host.rank() == 0) {
            s.launch(KernelLaunch{"busy_then_notify", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "ub");
                for (int i = 0; i < kLoads; ++i) {
                    co_await TLOAD(ub, GmTensor(src, 0, 16, 256, 256, DType::F16));
                    pipe_barrier(b, PIPE_ALL);
                }
                TNOTIFY(b, flag, 1, NotifyOp::AtomicAdd);
                co_return;
            }});
        } else {
            s.launch(KernelLaunch{"wait", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                co_await TWAIT(b, flag, CmpOp::EQ, 1);
            }});
        }
        s.synchronize();
        windows[static_cast<std::size_t>(host.rank())] = s.kernel_stats().back().windows_run;
    });
    const auto log = rt.cluster().event_log();
    const auto notes = of(log, Opcode::TNOTIFY, 0);
    const auto waits = of(log, Opcode::TWAIT, 1);
    ASSERT_EQ(notes.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].end, notes[0].visible + h.poll());
    EXPECT_GT(windows[0], 20) << "the busy stream runs a window per load or so";
    EXPECT_LE(windows[1], 4) << "the waiting stream was woken for windows in which nothing changed for it";
}

// A TWAIT that issues after the notify was sent (and delivered to rank 1's signal store at a
// window barrier) but before it is visible must still wait until it is visible.
TEST(CrossRank, TwaitDoesNotSeeAWriteBeforeItIsVisible) {
    Hand h;
    Runtime rt(profile(), opts(2, DataMode::TimingOnly));
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 64, true);
    GmAllocation& x = rt.host(1).malloc("X", 16 * 16 * 2);
    const SignalAddr flag{1, flags.base};
    // Aim the TWAIT half way between the coordinator's lookahead (by then the write has been
    // handed over) and the notify's visible time.
    const SimTime lookahead = rt.cluster().coordinator().lookahead();
    ASSERT_GT(h.remote_atomic(), 2 * lookahead);
    const SimTime c = h.issue() + h.barrier();
    const int spins = static_cast<int>((lookahead + h.remote_atomic()) / 2 / c);
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        if (host.rank() == 0) {
            s.launch(KernelLaunch{"notify", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                TNOTIFY(b, flag, 5, NotifyOp::Set);
                co_return;
            }});
        } else {
            s.launch(KernelLaunch{"wait", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, 16, 16, DType::F16, "ub");
                for (int i = 0; i < spins; ++i) pipe_barrier(b, PIPE_ALL);
                co_await TLOAD(ub, GmTensor(x, 0, 16, 16, 16, DType::F16));  // resumes at its turn
                co_await TWAIT(b, flag, CmpOp::EQ, 5);
            }});
        }
        s.synchronize();
    });
    const auto log = rt.cluster().event_log();
    const auto note = of(log, Opcode::TNOTIFY, 0).at(0);
    const auto wait = of(log, Opcode::TWAIT, 1).at(0);
    EXPECT_GT(wait.start, note.end + lookahead);
    EXPECT_LT(wait.start + h.issue(), note.visible);
    EXPECT_EQ(wait.end, note.visible + h.poll());
}

// ============================================================ waves and host overheads =====

TEST(Waves, MoreBlocksThanCoresRunWhenTheFirstCoreFrees) {
    Hand h;
    const int cores = profile().chip.aiv_cores;
    const int blocks = cores + 2;
    Runtime rt(profile(), opts(1, DataMode::TimingOnly));
    // Block i runs (blocks - i) barriers: in the first wave the last block ends first.
    auto run = test::run_one_kernel(rt, CoreType::AIV, blocks, [&](BlockCtx& b) -> Task {
        for (int i = 0; i < b.block_num() - b.block_idx(); ++i) pipe_barrier(b, PIPE_ALL);
        co_return;
    });
    const auto log = rt.cluster().event_log();
    const SimTime k0 = h.launch_to_start();
    const SimTime c = h.issue() + h.barrier();
    for (int i = 0; i < cores; ++i) {
        const auto r = block_record(log, i);
        EXPECT_EQ(r.start, k0);
        EXPECT_EQ(r.core, i);
        EXPECT_EQ(r.end, k0 + (blocks - i) * c);
    }
    // Block `cores` takes the core that frees first (the last of the first wave), at that time.
    const auto first_late = block_record(log, cores);
    EXPECT_EQ(first_late.core, cores - 1);
    EXPECT_EQ(first_late.start, k0 + (blocks - (cores - 1)) * c);
    EXPECT_EQ(first_late.end, first_late.start + 2 * c);
    // The next one takes the core that frees second.
    const auto second_late = block_record(log, cores + 1);
    EXPECT_EQ(second_late.core, cores - 2);
    EXPECT_EQ(second_late.start, k0 + (blocks - (cores - 2)) * c);
    EXPECT_EQ(run.stats.end, k0 + blocks * c);
}

TEST(HostClock, LaunchAndSynchronizeOverheadsFollowTheProfile) {
    Hand h;
    Runtime rt(profile(), opts(2, DataMode::TimingOnly));
    const SimTime c = h.issue() + h.barrier();
    SimTime after_launches = 0, after_sync = 0, after_barrier0 = 0, after_barrier1 = 0;
    std::vector<KernelStats> stats;
    Event ev;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() == 0) {
            Stream& s = host.create_stream("s0");
            auto tiny = [](BlockCtx& b) -> Task {
                pipe_barrier(b, PIPE_ALL);
                co_return;
            };
            s.launch(KernelLaunch{"k1", CoreType::AIV, 1, tiny});
            s.record(ev);
            s.launch(KernelLaunch{"k2", CoreType::AIV, 1, tiny});
            after_launches = host.now();  // asynchronous: only the launch calls' cost
            s.synchronize();
            after_sync = host.now();
            stats = s.kernel_stats();
        }
        host.barrier();
        (host.rank() == 0 ? after_barrier0 : after_barrier1) = host.now();
    });
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(after_launches, 2 * h.launch_host());
    EXPECT_EQ(stats[0].start, h.launch_to_start());
    EXPECT_EQ(stats[0].end, h.launch_to_start() + c);
    ASSERT_TRUE(ev.reached());
    EXPECT_EQ(ev.time(), stats[0].end + h.kernel_end());
    // The second kernel starts when both the stream is free and its launch has arrived.
    EXPECT_EQ(stats[1].start, std::max(stats[0].end + h.kernel_end(), h.launch_host() + h.launch_to_start()));
    EXPECT_EQ(stats[1].end, stats[1].start + c);
    EXPECT_EQ(after_sync, std::max(after_launches, stats[1].end + h.kernel_end()) + h.sync());
    // The host barrier releases every rank at the latest arrival plus its cost.
    EXPECT_EQ(after_barrier0, after_sync + h.host_barrier());
    EXPECT_EQ(after_barrier1, after_barrier0);
}

}  // namespace sim_core_test
}  // namespace tandem
