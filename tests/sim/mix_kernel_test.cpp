// MIX kernels (one launch on AIC and AIV cores, a cluster per block) and the cross-core flags
// between their cores: indices, waves with more blocks than clusters, statistics over both core
// types, flag ping-pong timing worked out by hand from the profile, a set that waits for its pipe
// to drain, the mode 0 and mode 1 barriers, the 4-bit counter overflow, deadlock reports, and a
// cube -> vector -> cube hand-off whose data and times agree in functional and timing-only mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace mix_kernel_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

struct Hand {
    const Profile& p = profile();
    SimTime cyc(double n) const { return cycles_to_ps(n, p.chip.core_clock_mhz); }
    SimTime k0() const { return from_us(p.host.launch_to_start_us); }
    SimTime issue() const { return cyc(p.pipes.scalar_issue_cycles); }
    SimTime barrier() const { return cyc(p.pipes.pipe_barrier_cycles); }
    SimTime c() const { return issue() + barrier(); }  // one pipe_barrier(PIPE_ALL) on an idle core
    SimTime latency() const { return cyc(p.pipes.cross_core_flag_latency_cycles); }
    SimTime wait() const { return cyc(p.pipes.wait_flag_cycles); }
    SimTime set() const { return cyc(p.pipes.set_flag_cycles); }
};

ClusterOptions logged(DataMode mode = DataMode::TimingOnly) { return ClusterOptions{1, mode, true}; }

void spin(BlockCtx& b, int n) {
    for (int i = 0; i < n; ++i) pipe_barrier(b, PIPE_ALL);
}

std::vector<InstrRecord> select(const std::vector<InstrRecord>& log, Opcode op, CoreType type, int core = -1) {
    std::vector<InstrRecord> out;
    for (const InstrRecord& r : log)
        if (r.op == op && r.core_type == type && (core < 0 || r.core == core)) out.push_back(r);
    return out;
}

std::string expect_error(Runtime& rt, LaunchCores type, int blocks, KernelFn fn, std::initializer_list<std::string> parts) {
    try {
        test::run_one_kernel(rt, type, blocks, std::move(fn));
    } catch (const SimError& e) {
        const std::string msg = e.what();
        ::testing::Test::RecordProperty("message", msg);
        for (const std::string& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << "lacks '" << part << "':\n" << msg;
        return msg;
    }
    ADD_FAILURE() << "expected the run to fail";
    return {};
}

// ============================================================ launch shape ==================

TEST(MixKernel, EachBlockRunsOnOneClusterWithItsIndices) {
    struct Call {
        CoreType type;
        int block, num, sub, subs, core;
        bool mix;
    };
    std::vector<Call> calls;
    Runtime rt(profile(), logged());
    auto run = test::run_one_kernel(rt, KernelType::MIX, 3, [&](BlockCtx& b) -> Task {
        calls.push_back({b.core_type(), b.block_idx(), b.block_num(), b.sub_block_idx(), b.sub_block_num(), b.core().index, b.mix()});
        if (b.core_type() == CoreType::AIC) {
            Tile& a = b.alloc_tile(MemKind::L0A, 64, 64, DType::F16, "a");
            Tile& w = b.alloc_tile(MemKind::L0B, 64, 64, DType::F16, "w");
            Tile& c = b.alloc_tile(MemKind::L0C, 64, 64, DType::F32, "c");
            TMATMUL(c, a, w);
        } else {
            Tile& v = b.alloc_tile(MemKind::UB, 64, 64, DType::F16, "v");
            TADDS(v, v, 1.0f);
        }
        co_return;
    });
    ASSERT_EQ(calls.size(), 9u);
    int aic = 0, aiv = 0;
    for (const Call& c : calls) {
        EXPECT_TRUE(c.mix);
        EXPECT_EQ(c.num, 3);
        if (c.type == CoreType::AIC) {
            ++aic;
            EXPECT_EQ(c.sub, 0);
            EXPECT_EQ(c.subs, 1);
            EXPECT_EQ(c.core, c.block);  // cluster i = AIC core i ...
        } else {
            ++aiv;
            EXPECT_EQ(c.subs, 2);
            EXPECT_EQ(c.core, 2 * c.block + c.sub);  // ... with AIV cores 2i and 2i + 1
        }
    }
    EXPECT_EQ(aic, 3);
    EXPECT_EQ(aiv, 6);
    // The kernel's statistics cover both core types.
    const auto log = rt.cluster().event_log();
    SimTime cube = 0, vec = 0;
    for (const InstrRecord& r : log) {
        if (r.op == Opcode::TMATMUL) cube += r.end - r.start;
        if (r.op == Opcode::TADDS) vec += r.end - r.start;
    }
    EXPECT_GT(cube, 0);
    EXPECT_GT(vec, 0);
    EXPECT_EQ(run.stats.busy_ps[pipe_index(Pipe::M)], cube);
    EXPECT_EQ(run.stats.busy_ps[pipe_index(Pipe::V)], vec);
    EXPECT_EQ(run.stats.instructions, 9);
}

// 26 blocks on 24 clusters: block b's AIC spins (26 - b) barriers, its first AIV one, its second
// AIV (26 - b) + 1; a cluster is free when its slowest part is done, and the next block takes the
// cluster that frees first.
TEST(MixKernel, MoreBlocksThanClustersRunInWavesOfWholeClusters) {
    Hand h;
    const int clusters = std::min(profile().chip.aic_cores, profile().chip.aiv_cores / 2);
    const int blocks = clusters + 2;
    Runtime rt(profile(), logged());
    auto run = test::run_one_kernel(rt, KernelType::MIX, blocks, [&](BlockCtx& b) -> Task {
        const int n = b.block_num() - b.block_idx();
        if (b.core_type() == CoreType::AIC) spin(b, n);
        else spin(b, b.sub_block_idx() == 0 ? 1 : n + 1);
        co_return;
    });
    const auto log = rt.cluster().event_log();
    auto block_parts = [&](int block) {
        std::vector<InstrRecord> parts;
        for (const InstrRecord& r : log)
            if (r.op == Opcode::BLOCK && r.block == block) parts.push_back(r);
        return parts;
    };
    for (int b = 0; b < clusters; ++b) {
        for (const InstrRecord& r : block_parts(b)) EXPECT_EQ(r.start, h.k0()) << b;
    }
    // The last cluster of the first wave frees first (at its second AIV's end), then the one before.
    for (int late = 0; late < 2; ++late) {
        const int block = clusters + late;
        const int cluster = clusters - 1 - late;
        const SimTime freed = h.k0() + (blocks - cluster + 1) * h.c();
        const auto parts = block_parts(block);
        ASSERT_EQ(parts.size(), 3u) << block;
        for (const InstrRecord& r : parts) {
            EXPECT_EQ(r.start, freed) << "block " << block;
            EXPECT_EQ(r.core, r.core_type == CoreType::AIC ? cluster : 2 * cluster + (r.core % 2)) << block;
        }
    }
    EXPECT_EQ(run.stats.end, h.k0() + (blocks + 1) * h.c());  // cluster 0's second AIV
}

// ============================================================ cross-core flags ==============

// AIC -> both AIVs on flag 0, both AIVs -> AIC on flag 1, three rounds; the second AIV is slower,
// so the AIC's wait ends when the later of the two sets has arrived.
TEST(CrossCoreFlags, PingPongBetweenTheCubeAndBothVectorCoresTakesTheHandComputedTime) {
    Hand h;
    constexpr int rounds = 3, delay = 7;
    Runtime rt(profile(), logged());
    test::run_one_kernel(rt, KernelType::MIX, 1, [&](BlockCtx& b) -> Task {
        for (int i = 0; i < rounds; ++i) {
            if (b.core_type() == CoreType::AIC) {
                CrossCoreSetFlag(b, 2, PIPE_S, 0);
                co_await CrossCoreWaitFlag(b, 1);
            } else {
                co_await CrossCoreWaitFlag(b, 0);
                if (b.sub_block_idx() == 1) spin(b, delay);
                CrossCoreSetFlag(b, 2, PIPE_S, 1);
            }
        }
    });
    const auto log = rt.cluster().event_log();
    const auto aic_waits = select(log, Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIC);
    const auto aic_sets = select(log, Opcode::CROSS_CORE_SET_FLAG, CoreType::AIC);
    ASSERT_EQ(aic_waits.size(), std::size_t{rounds});
    ASSERT_EQ(aic_sets.size(), std::size_t{rounds});
    std::vector<InstrRecord> aiv_waits[2], aiv_sets[2];
    for (int s = 0; s < 2; ++s) {
        aiv_waits[s] = select(log, Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIV, s);
        aiv_sets[s] = select(log, Opcode::CROSS_CORE_SET_FLAG, CoreType::AIV, s);
        ASSERT_EQ(aiv_waits[s].size(), std::size_t{rounds});
        ASSERT_EQ(aiv_sets[s].size(), std::size_t{rounds});
    }
    SimTime aic = h.k0(), aiv[2] = {h.k0(), h.k0()};
    for (int i = 0; i < rounds; ++i) {
        const SimTime set = aic + h.issue();  // PIPE_S: set when issued
        EXPECT_EQ(aic_sets[i].start, set) << i;
        EXPECT_EQ(aic_sets[i].visible, set + h.latency()) << i;
        EXPECT_EQ(aic_sets[i].value, 0);
        SimTime arrived[2];
        for (int s = 0; s < 2; ++s) {
            const SimTime resume = std::max(aiv[s] + h.issue(), set + h.latency()) + h.wait();
            EXPECT_EQ(aiv_waits[s][i].end, resume) << "round " << i << " AIV " << s;
            EXPECT_EQ(aiv_waits[s][i].value, 0);
            const SimTime aiv_set = resume + (s == 1 ? delay * h.c() : 0) + h.issue();
            EXPECT_EQ(aiv_sets[s][i].start, aiv_set) << "round " << i << " AIV " << s;
            arrived[s] = aiv_set + h.latency();
            aiv[s] = aiv_set;
        }
        aic = std::max(set + h.issue(), std::max(arrived[0], arrived[1])) + h.wait();
        EXPECT_EQ(aic_waits[i].end, aic) << "round " << i;
        EXPECT_GT(arrived[1], arrived[0]);
    }
}

// A set on PIPE_FIX waits for the store before it: the count leaves when FIX has drained.
TEST(CrossCoreFlags, ASetOnAPipeWaitsForThePipeToDrain) {
    Hand h;
    Runtime rt(profile(), logged());
    GmAllocation& ws = rt.host(0).malloc("ws", 128 * 256 * 4);
    test::run_one_kernel(rt, KernelType::MIX, 1, [&](BlockCtx& b) -> Task {
        if (b.core_type() == CoreType::AIC) {
            Tile& acc = b.alloc_tile(MemKind::L0C, 128, 256, DType::F32, "acc");
            co_await TSTORE(GmTensor(ws, 0, 128, 256, 256, DType::F32), acc);
            CrossCoreSetFlag(b, 2, PIPE_FIX, 3);
        } else {
            co_await CrossCoreWaitFlag(b, 3);
        }
    });
    const auto log = rt.cluster().event_log();
    const auto store = select(log, Opcode::TSTORE, CoreType::AIC).at(0);
    const auto set = select(log, Opcode::CROSS_CORE_SET_FLAG, CoreType::AIC).at(0);
    EXPECT_EQ(set.pipe, Pipe::FIX);
    // The store's record is FIX's own work (its L0C read); the pipe drains when its write has.
    const SimTime drained = store.start + cycles_to_ps(profile().pipes.gm_access_latency_cycles, profile().chip.core_clock_mhz) +
                            bytes_at_gib_s(128.0 * 256 * 4, profile().pipes.l0c_to_gm_gib_s);
    EXPECT_GE(drained, store.end);
    EXPECT_NEAR(set.start, drained + h.set(), 2);
    for (const InstrRecord& w : select(log, Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIV))
        EXPECT_NEAR(w.end, drained + h.set() + h.latency() + h.wait(), 2);
}

// Mode 0: every AIV block of a plain AIV launch sets and waits: a barrier that releases all at
// the last set's arrival. Mode 1: the two AIVs of a cluster.
TEST(CrossCoreFlags, ModeZeroAndModeOneAreBarriers) {
    Hand h;
    {
        Runtime rt(profile(), logged());
        test::run_one_kernel(rt, CoreType::AIV, 4, [&](BlockCtx& b) -> Task {
            spin(b, 10 * b.block_idx());
            CrossCoreSetFlag(b, 0, PIPE_S, 7);
            co_await CrossCoreWaitFlag(b, 7);
        });
        const auto waits = select(rt.cluster().event_log(), Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIV);
        ASSERT_EQ(waits.size(), 4u);
        const SimTime last_set = h.k0() + 30 * h.c() + h.issue();
        for (const InstrRecord& w : waits) EXPECT_EQ(w.end, last_set + h.latency() + h.wait()) << "block " << w.block;
    }
    {
        Runtime rt(profile(), logged());
        test::run_one_kernel(rt, KernelType::MIX, 2, [&](BlockCtx& b) -> Task {
            if (b.core_type() == CoreType::AIC) co_return;
            spin(b, b.sub_block_idx() == 1 ? 5 + b.block_idx() : 0);
            CrossCoreSetFlag(b, 1, PIPE_S, 2);
            co_await CrossCoreWaitFlag(b, 2);
        });
        const auto waits = select(rt.cluster().event_log(), Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIV);
        ASSERT_EQ(waits.size(), 4u);
        for (const InstrRecord& w : waits) {
            const SimTime last_set = h.k0() + (5 + w.block) * h.c() + h.issue();
            EXPECT_EQ(w.end, last_set + h.latency() + h.wait()) << "block " << w.block << " core " << w.core;
        }
    }
}

TEST(CrossCoreFlags, FifteenPendingCountsFitSixteenOverflow) {
    Hand h;
    {  // 15 sets before the first wait: fine
        Runtime rt(profile(), logged());
        test::run_one_kernel(rt, KernelType::MIX, 1, [&](BlockCtx& b) -> Task {
            if (b.core_type() == CoreType::AIC) {
                for (int i = 0; i < 15; ++i) CrossCoreSetFlag(b, 2, PIPE_S, 2);
                co_return;
            }
            spin(b, 1000);
            for (int i = 0; i < 15; ++i) co_await CrossCoreWaitFlag(b, 2);
        });
        EXPECT_EQ(select(rt.cluster().event_log(), Opcode::CROSS_CORE_WAIT_FLAG, CoreType::AIV).size(), 30u);
    }
    {  // 16 arrive before the wait takes one
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIC) {
                             for (int i = 0; i < 16; ++i) CrossCoreSetFlag(b, 2, PIPE_S, 2);
                             co_return;
                         }
                         spin(b, 1000);
                         for (int i = 0; i < 16; ++i) co_await CrossCoreWaitFlag(b, 2);
                     },
                     {"rank 0, stream 's0', kernel 'k', block 0 AIV sub-block 0 on AIV core 0", "CrossCoreWaitFlag",
                      "cross-core flag 2 overflowed: 16 counts arrived"});
    }
    {  // 16 sent to AIVs that never take them
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIC)
                             for (int i = 0; i < 16; ++i) CrossCoreSetFlag(b, 2, PIPE_S, 4);
                         co_return;
                     },
                     {"cross-core flag 4 overflowed", "16 counts were sent to it and never taken"});
    }
    (void)h;
}

TEST(CrossCoreFlags, AWaitThatNoSetCanSatisfyIsADeadlockNamingTheSubCoreAndFlag) {
    {
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIV && b.sub_block_idx() == 1) co_await CrossCoreWaitFlag(b, 5);
                     },
                     {"deadlock", "rank 0, stream 's0', kernel 'k', block 0 AIV sub-block 1 on AIV core 1",
                      "CrossCoreWaitFlag(5)", "no CrossCoreSetFlag of this flag has reached it"});
    }
    {  // the AIC needs a count from each AIV; only the first sets
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIC) co_await CrossCoreWaitFlag(b, 1);
                         else if (b.sub_block_idx() == 0) CrossCoreSetFlag(b, 2, PIPE_S, 1);
                     },
                     {"deadlock", "block 0 AIC on AIC core 0", "CrossCoreWaitFlag(1)",
                      "still to set it: block 0 AIV sub-block 1"});
    }
    {  // with a TWAIT in the same kernel the coordinator reports both
        Runtime rt(profile(), logged());
        GmAllocation& sig = rt.cluster().chip(0).gm.allocate("sig", 64, true);
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIC) co_await CrossCoreWaitFlag(b, 6);
                         else if (b.sub_block_idx() == 0) co_await TWAIT(b, SignalAddr{0, sig.base}, CmpOp::EQ, 1);
                     },
                     {"deadlock", "block 0 AIV sub-block 0: TWAIT on rank 0 'sig'", "block 0 AIC on AIC core 0",
                      "CrossCoreWaitFlag(6)"});
    }
}

TEST(CrossCoreFlags, MisuseIsReported) {
    {
        Runtime rt(profile(), logged());
        expect_error(rt, CoreType::AIV, 1,
                     [&](BlockCtx& b) -> Task {
                         CrossCoreSetFlag(b, 2, PIPE_S, 0);
                         co_return;
                     },
                     {"CrossCoreSetFlag mode 2 synchronises the cores of one cluster, which needs a MIX kernel"});
    }
    {
        Runtime rt(profile(), logged());
        expect_error(rt, CoreType::AIV, profile().chip.aiv_cores + 1,
                     [&](BlockCtx& b) -> Task {
                         CrossCoreSetFlag(b, 0, PIPE_S, 0);
                         co_return;
                     },
                     {"mode 0 synchronises every block of the launch", "49 blocks for 48 cores"});
    }
    {
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         if (b.core_type() == CoreType::AIC) CrossCoreSetFlag(b, 2, PIPE_S, 9);
                         else CrossCoreSetFlag(b, 1, PIPE_S, 9);
                         co_return;
                     },
                     {"flag 9 of block 0 AIV sub-block", "another mode"});
    }
    {
        Runtime rt(profile(), logged());
        expect_error(rt, KernelType::MIX, 1,
                     [&](BlockCtx& b) -> Task {
                         co_await CrossCoreWaitFlag(b, 16);
                     },
                     {"CrossCoreWaitFlag: flag id 16 out of range 0..15"});
    }
}

// ============================================================ a cube -> vector hand-off =====

// The AIC computes C = A * B into a GM workspace and flags its AIVs (on PIPE_FIX); each AIV adds
// 1 to its half of the rows and stores them, then flags the AIC back. Values exact; functional
// and timing-only give the same event log; two functional runs give the same log.
struct HandOff {
    std::vector<float> out;
    std::vector<std::string> log;
};

HandOff run_handoff(DataMode mode) {
    constexpr int m = 32, k = 32, n = 64;
    Runtime rt(profile(), logged(mode));
    GmAllocation& a = rt.host(0).malloc("A", m * k * 2);
    GmAllocation& bm = rt.host(0).malloc("B", k * n * 2);
    GmAllocation& ws = rt.host(0).malloc("ws", m * n * 4);
    GmAllocation& out = rt.host(0).malloc("out", m * n * 4);
    if (mode == DataMode::Functional) {
        for (int i = 0; i < m * k; ++i) {
            const std::uint16_t v = float_to_half(float(i % 7));
            std::memcpy(a.data.data() + i * 2, &v, 2);
        }
        for (int i = 0; i < k * n; ++i) {
            const std::uint16_t v = float_to_half(float(i % 5) - 2.0f);
            std::memcpy(bm.data.data() + i * 2, &v, 2);
        }
    }
    test::run_one_kernel(rt, KernelType::MIX, 1, [&](BlockCtx& b) -> Task {
        if (b.core_type() == CoreType::AIC) {
            Tile& aL1 = b.alloc_tile(MemKind::L1, m, k, DType::F16, "aL1");
            Tile& bL1 = b.alloc_tile(MemKind::L1, k, n, DType::F16, "bL1");
            Tile& aL0 = b.alloc_tile(MemKind::L0A, m, k, DType::F16, "aL0");
            Tile& bL0 = b.alloc_tile(MemKind::L0B, k, n, DType::F16, "bL0");
            Tile& acc = b.alloc_tile(MemKind::L0C, m, n, DType::F32, "acc");
            co_await TLOAD(aL1, GmTensor(a, 0, m, k, k, DType::F16));
            co_await TLOAD(bL1, GmTensor(bm, 0, k, n, n, DType::F16));
            set_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
            wait_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
            TEXTRACT(aL0, aL1, 0, 0);
            TEXTRACT(bL0, bL1, 0, 0);
            set_flag(b, PIPE_MTE1, PIPE_M, 0);
            wait_flag(b, PIPE_MTE1, PIPE_M, 0);
            TMATMUL(acc, aL0, bL0);
            set_flag(b, PIPE_M, PIPE_FIX, 0);
            wait_flag(b, PIPE_M, PIPE_FIX, 0);
            co_await TSTORE(GmTensor(ws, 0, m, n, n, DType::F32), acc);
            CrossCoreSetFlag(b, 2, PIPE_FIX, 0);
            co_await CrossCoreWaitFlag(b, 1);
        } else {
            const int half = m / 2, r0 = b.sub_block_idx() * half;
            Tile& t = b.alloc_tile(MemKind::UB, half, n, DType::F32, "t");
            co_await CrossCoreWaitFlag(b, 0);
            co_await TLOAD(t, GmTensor(ws, std::int64_t{r0} * n * 4, half, n, n, DType::F32));
            set_flag(b, PIPE_MTE2, PIPE_V, 0);
            wait_flag(b, PIPE_MTE2, PIPE_V, 0);
            TADDS(t, t, 1.0f);
            set_flag(b, PIPE_V, PIPE_MTE3, 0);
            wait_flag(b, PIPE_V, PIPE_MTE3, 0);
            co_await TSTORE(GmTensor(out, std::int64_t{r0} * n * 4, half, n, n, DType::F32), t);
            CrossCoreSetFlag(b, 2, PIPE_MTE3, 1);
        }
    });
    HandOff h;
    for (const InstrRecord& r : rt.cluster().event_log()) h.log.push_back(format_record(r));
    if (mode == DataMode::Functional) {
        h.out.resize(m * n);
        std::memcpy(h.out.data(), out.data.data(), h.out.size() * 4);
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double s = 1.0;
                for (int kk = 0; kk < k; ++kk) s += double((i * k + kk) % 7) * (double((kk * n + j) % 5) - 2.0);
                EXPECT_EQ(h.out[static_cast<std::size_t>(i * n + j)], float(s)) << i << "," << j;
            }
    }
    return h;
}

TEST(MixKernel, CubeToVectorHandOffIsExactAndTimedTheSameWithoutData) {
    const HandOff f1 = run_handoff(DataMode::Functional);
    const HandOff f2 = run_handoff(DataMode::Functional);
    const HandOff t = run_handoff(DataMode::TimingOnly);
    EXPECT_EQ(f1.out, f2.out);
    EXPECT_EQ(f1.log, f2.log);
    EXPECT_EQ(f1.log, t.log);
    EXPECT_GT(f1.log.size(), 20u);
}

}  // namespace mix_kernel_test
}  // namespace tandem
