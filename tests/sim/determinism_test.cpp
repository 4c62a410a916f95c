// Determinism of the threaded runtime: a multi-rank program (4 ranks, a compute and a comm
// stream each, notifies across streams and ranks, a host-written go flag, more blocks than cores
// so they run in waves) gives byte-identical event logs, times and results run after run, and
// when the whole process is pinned to one host core; and the timing-only mode gives exactly the
// times and log of the functional mode.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace determinism_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

constexpr int kComputeBlocks = 30;  // > 24 AIC cores: two waves
constexpr int kCommBlocks = 50;     // > 48 AIV cores: two waves
constexpr int kSlots = 8;           // ready signals, compute block i -> slot i % 8
constexpr int kWaiters = 2;         // comm blocks that wait for every block of the previous rank

int blocks_in_slot(int s) { return (kComputeBlocks - s + kSlots - 1) / kSlots; }

struct ProgramResult {
    std::string log;      // every record, formatted, in the log's total order
    std::string timing;   // kernel statistics and host clocks
    std::string data;     // functional results (empty in timing-only mode)
    std::size_t records = 0;
    int waits = 0, notifies = 0, remote_notifies = 0, late_blocks = 0;
};

// Every rank r: a compute stream on AIC (30 blocks, each a small two-step GEMM into its slot of
// C_r, then a local notify on ready[i % 8]) and a comm stream on AIV (50 blocks, each waiting
// for the host's go flag and for its compute slot, then TPUT of a C_r tile into rank r+1's
// window and an atomic add on rank r+1's arrival counter; blocks 0 and 1 then wait until all 50
// of rank r-1's blocks have arrived and read their window).
ProgramResult run_program(int ranks, DataMode mode) {
    Runtime rt(profile(), ClusterOptions{ranks, mode, true});
    struct PerRank {
        GmAllocation *a, *b, *c, *win, *ready, *arrived, *go, *echo;
    };
    std::vector<PerRank> mem;
    for (int r = 0; r < ranks; ++r) {
        GlobalMemory& gm = rt.cluster().chip(r).gm;
        PerRank m{};
        m.a = &gm.allocate("A", 64 * 128 * 2);
        m.b = &gm.allocate("B", 128 * 64 * 2);
        m.c = &gm.allocate("C", std::int64_t{kComputeBlocks} * 64 * 64 * 4);
        m.win = &gm.allocate("win", std::int64_t{kCommBlocks} * 16 * 64 * 4, /*shared=*/true);
        m.ready = &gm.allocate("ready", kSlots * 4, true);
        m.arrived = &gm.allocate("arrived", 4, true);
        m.go = &gm.allocate("go", 4, true);
        m.echo = &gm.allocate("echo", std::int64_t{kWaiters} * 16 * 64 * 4);
        if (mode == DataMode::Functional) {
            for (std::int64_t i = 0; i < 64 * 128; ++i) {
                const std::uint16_t ha = float_to_half(float((i * 3 + r) % 11 - 5) / 4.0f);
                const std::uint16_t hb = float_to_half(float((i * 7 + 2 * r) % 9 - 4) / 4.0f);
                std::memcpy(m.a->data.data() + i * 2, &ha, 2);
                std::memcpy(m.b->data.data() + i * 2, &hb, 2);
            }
        }
        mem.push_back(m);
    }

    auto compute = [&](BlockCtx& blk) -> Task {
        const PerRank& m = mem[static_cast<std::size_t>(blk.rank())];
        const int i = blk.block_idx();
        for (int w = 0; w < (i * 7 + blk.rank()) % 5; ++w) pipe_barrier(blk, PIPE_ALL);  // uneven blocks
        Tile& aMat = blk.alloc_tile(MemKind::L1, 64, 128, DType::F16, "aMat");
        Tile& bMat = blk.alloc_tile(MemKind::L1, 128, 64, DType::F16, "bMat");
        Tile& aT = blk.alloc_tile(MemKind::L0A, 64, 64, DType::F16, "aTile");
        Tile& bT = blk.alloc_tile(MemKind::L0B, 64, 64, DType::F16, "bTile");
        Tile& cT = blk.alloc_tile(MemKind::L0C, 64, 64, DType::F32, "cTile");
        co_await TLOAD(aMat, GmTensor(*m.a, 0, 64, 128, 128, DType::F16));
        co_await TLOAD(bMat, GmTensor(*m.b, 0, 128, 64, 64, DType::F16));
        set_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
        wait_flag(blk, PIPE_MTE2, PIPE_MTE1, 0);
        for (int kk = 0; kk < 2; ++kk) {
            if (kk > 0) wait_flag(blk, PIPE_M, PIPE_MTE1, 0);
            TEXTRACT(aT, aMat, 0, kk * 64);
            TEXTRACT(bT, bMat, kk * 64, 0);
            set_flag(blk, PIPE_MTE1, PIPE_M, 0);
            wait_flag(blk, PIPE_MTE1, PIPE_M, 0);
            if (kk == 0) TMATMUL(cT, aT, bT);
            else TMATMUL_ACC(cT, aT, bT);
            if (kk == 0) set_flag(blk, PIPE_M, PIPE_MTE1, 0);
        }
        set_flag(blk, PIPE_M, PIPE_FIX, 0);
        wait_flag(blk, PIPE_M, PIPE_FIX, 0);
        co_await TSTORE(GmTensor(*m.c, std::int64_t{i} * 64 * 64 * 4, 64, 64, 64, DType::F32), cT);
        pipe_barrier(blk, PIPE_ALL);  // the result is in GM before the notify
        TNOTIFY(blk, SignalAddr{blk.rank(), m.ready->base + 4 * (i % kSlots)}, 1, NotifyOp::AtomicAdd);
    };

    auto comm = [&](BlockCtx& blk) -> Task {
        const int r = blk.rank();
        const int next = (r + 1) % blk.ranks();
        const PerRank& m = mem[static_cast<std::size_t>(r)];
        const PerRank& peer = mem[static_cast<std::size_t>(next)];
        const int j = blk.block_idx();
        const int slot = j % kSlots;
        const int src_block = slot + kSlots * ((j / kSlots) % blocks_in_slot(slot));
        Tile& ub = blk.alloc_tile(MemKind::UB, 16, 64, DType::F32, "ub");
        co_await TWAIT(blk, SignalAddr{r, m.go->base}, CmpOp::EQ, 1);
        co_await TWAIT(blk, SignalAddr{r, m.ready->base + 4 * slot}, CmpOp::GE, blocks_in_slot(slot));
        const GmTensor c_tile(*m.c, std::int64_t{src_block} * 64 * 64 * 4 + (j % 4) * 16 * 64 * 4, 16, 64, 64, DType::F32);
        co_await TPUT(GmTensor(*peer.win, std::int64_t{j} * 16 * 64 * 4, 16, 64, 64, DType::F32), c_tile, ub);
        TNOTIFY(blk, SignalAddr{next, peer.arrived->base}, 1, NotifyOp::AtomicAdd);
        if (j < kWaiters) {
            co_await TWAIT(blk, SignalAddr{r, m.arrived->base}, CmpOp::EQ, kCommBlocks);
            const bool again = co_await TTEST(blk, SignalAddr{r, m.arrived->base}, CmpOp::GE, kCommBlocks);
            if (!again) throw SimError("TTEST after TWAIT saw the counter go down");
            co_await TLOAD(ub, GmTensor(*m.win, std::int64_t{kCommBlocks - 1 - j} * 16 * 64 * 4, 16, 64, 64, DType::F32));
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
            co_await TSTORE(GmTensor(*m.echo, std::int64_t{j} * 16 * 64 * 4, 16, 64, 64, DType::F32), ub);
        }
    };

    std::vector<std::string> timing(static_cast<std::size_t>(ranks));
    rt.run_hosts([&](HostContext& host) {
        Stream& cs = host.create_stream("compute");
        Stream& ms = host.create_stream("comm");
        host.barrier();
        cs.launch(KernelLaunch{"gemm", CoreType::AIC, kComputeBlocks, compute});
        ms.launch(KernelLaunch{"ring", CoreType::AIV, kCommBlocks, comm});
        host.write_signals(mem[static_cast<std::size_t>(host.rank())].go->base, 1, 1);
        cs.synchronize();
        ms.synchronize();
        const SimTime after_sync = host.now();
        host.barrier();
        std::string& t = timing[static_cast<std::size_t>(host.rank())];
        for (const Stream* s : {&cs, &ms}) {
            for (const KernelStats& k : s->kernel_stats()) {
                t += fmt::format("rank {} {} start={} end={} instr={} stall={}\n", host.rank(), s->name(), k.start,
                                 k.end, k.instructions, k.twait_stall_ps);
            }
        }
        t += fmt::format("rank {} host sync={} barrier={}\n", host.rank(), after_sync, host.now());
    });

    ProgramResult out;
    for (const std::string& t : timing) out.timing += t;
    const std::vector<InstrRecord> log = rt.cluster().event_log();
    out.records = log.size();
    for (const InstrRecord& r : log) {
        out.log += format_record(r);
        out.log += '\n';
        if (r.op == Opcode::TWAIT) ++out.waits;
        if (r.op == Opcode::TNOTIFY) ++out.notifies;
        if (r.op == Opcode::TNOTIFY && r.peer != r.rank) ++out.remote_notifies;
        if (r.op == Opcode::BLOCK && r.core_type == CoreType::AIV && r.block >= profile().chip.aiv_cores) ++out.late_blocks;
    }
    if (mode == DataMode::Functional) {
        for (int r = 0; r < ranks; ++r) {
            for (const GmAllocation* a : {mem[std::size_t(r)].c, mem[std::size_t(r)].win, mem[std::size_t(r)].echo}) {
                out.data.append(reinterpret_cast<const char*>(a->data.data()), a->data.size());
            }
        }
    }
    return out;
}

// The program does what it is meant to, so that comparing its runs means something.
void expect_meaningful(const ProgramResult& p, int ranks) {
    EXPECT_EQ(p.waits, ranks * (2 * kCommBlocks + kWaiters));
    EXPECT_EQ(p.notifies, ranks * (kComputeBlocks + kCommBlocks));
    EXPECT_EQ(p.remote_notifies, ranks * kCommBlocks);
    EXPECT_EQ(p.late_blocks, ranks * (kCommBlocks - profile().chip.aiv_cores));
    EXPECT_GT(p.records, std::size_t(ranks) * 1000);
}

// ---- functional vs timing-only ------------------------------------------------------------

TEST(DataModes, FunctionalAndTimingOnlyGiveIdenticalTimes) {
    const ProgramResult f = run_program(2, DataMode::Functional);
    const ProgramResult t = run_program(2, DataMode::TimingOnly);
    expect_meaningful(f, 2);
    EXPECT_EQ(f.timing, t.timing);
    EXPECT_EQ(f.records, t.records);
    EXPECT_TRUE(f.log == t.log) << "event logs differ between functional and timing-only mode";
    EXPECT_FALSE(f.data.empty());
    EXPECT_TRUE(t.data.empty());
}

TEST(DataModes, FunctionalRunMovesTheComputedData) {
    // The window slot j of rank r+1 holds rows (j % 4)*16.. of compute block src(j)'s C tile of
    // rank r, and that tile is A_r * B_r: check one slot against a reference product.
    const ProgramResult f = run_program(2, DataMode::Functional);
    const std::size_t c_bytes = std::size_t(kComputeBlocks) * 64 * 64 * 4;
    const std::size_t win_bytes = std::size_t(kCommBlocks) * 16 * 64 * 4;
    const std::size_t echo_bytes = std::size_t(kWaiters) * 16 * 64 * 4;
    ASSERT_EQ(f.data.size(), 2 * (c_bytes + win_bytes + echo_bytes));
    auto f32 = [&](std::size_t byte_offset) {
        float v;
        std::memcpy(&v, f.data.data() + byte_offset, 4);
        return v;
    };
    for (int r = 0; r < 2; ++r) {
        const std::size_t base = std::size_t(r) * (c_bytes + win_bytes + echo_bytes);
        // Every compute block of rank r wrote A_r * B_r.
        for (int i = 0; i < 64; i += 9) {
            for (int j = 0; j < 64; j += 7) {
                double ref = 0;
                for (int k = 0; k < 128; ++k) {  // exact: multiples of 1/16, well inside fp32
                    const std::int64_t ai = std::int64_t{i} * 128 + k, bi = std::int64_t{k} * 64 + j;
                    ref += double(float((ai * 3 + r) % 11 - 5) / 4.0f) * double(float((bi * 7 + 2 * r) % 9 - 4) / 4.0f);
                }
                for (int blk : {0, kComputeBlocks - 1}) {
                    ASSERT_EQ(f32(base + std::size_t(blk) * 64 * 64 * 4 + (std::size_t(i) * 64 + j) * 4), float(ref))
                        << "rank " << r << " block " << blk << " C(" << i << "," << j << ")";
                }
            }
        }
        // Rank r's window came from rank r-1 (mod 2 = the other rank): slot j = its C rows.
        const int prev = 1 - r;
        const std::size_t prev_base = std::size_t(prev) * (c_bytes + win_bytes + echo_bytes);
        for (int j = 0; j < kCommBlocks; ++j) {
            const int slot = j % kSlots;
            const int src_block = slot + kSlots * ((j / kSlots) % blocks_in_slot(slot));
            const std::size_t src = prev_base + std::size_t(src_block) * 64 * 64 * 4 + std::size_t(j % 4) * 16 * 64 * 4;
            const std::size_t dst = base + c_bytes + std::size_t(j) * 16 * 64 * 4;
            ASSERT_EQ(std::memcmp(f.data.data() + src, f.data.data() + dst, 16 * 64 * 4), 0) << "rank " << r << " slot " << j;
        }
        // The waiters read their window after every block of the other rank had arrived.
        for (int j = 0; j < kWaiters; ++j) {
            const std::size_t echo = base + c_bytes + win_bytes + std::size_t(j) * 16 * 64 * 4;
            const std::size_t slot = base + c_bytes + std::size_t(kCommBlocks - 1 - j) * 16 * 64 * 4;
            ASSERT_EQ(std::memcmp(f.data.data() + echo, f.data.data() + slot, 16 * 64 * 4), 0) << "rank " << r;
        }
    }
}

// ---- run to run ---------------------------------------------------------------------------

TEST(Determinism, FourRanksTwoStreamsFiveRunsAreByteIdentical) {
    const ProgramResult first = run_program(4, DataMode::Functional);
    expect_meaningful(first, 4);
    for (int run = 1; run < 5; ++run) {
        const ProgramResult again = run_program(4, DataMode::Functional);
        EXPECT_EQ(again.records, first.records) << "run " << run;
        EXPECT_TRUE(again.log == first.log) << "run " << run << ": event log differs";
        EXPECT_EQ(again.timing, first.timing) << "run " << run;
        EXPECT_TRUE(again.data == first.data) << "run " << run << ": results differ";
    }
}

// What the pinned run below compares: the log, the times and the results.
std::string digest_text(const ProgramResult& p) { return p.timing + p.log + p.data; }

int allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    return CPU_COUNT(&set);
}

int first_allowed_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) return c;
    return -1;
}

constexpr const char* kOutEnv = "TANDEM_DETERMINISM_OUT";

// Helper for PinnedToOneHostCoreMatchesTheUnpinnedRun: run in a child process (re-executed under
// taskset), it writes the number of host CPUs it may use and the program's digest to the file
// named by $TANDEM_DETERMINISM_OUT. Disabled: it only makes sense when re-executed.
TEST(Determinism, DISABLED_PinnedRunHelper) {
    const char* out = std::getenv(kOutEnv);
    ASSERT_NE(out, nullptr) << "set " << kOutEnv;
    const ProgramResult p = run_program(4, DataMode::Functional);
    std::ofstream f(out, std::ios::binary);
    f << "cpus=" << allowed_cpus() << '\n' << digest_text(p);
    ASSERT_TRUE(f.good());
}

TEST(Determinism, PinnedToOneHostCoreMatchesTheUnpinnedRun) {
    // Pin to the first CPU this process may use (CPU 0 on an unrestricted machine).
    const int cpu = first_allowed_cpu();
    ASSERT_GE(cpu, 0);
    if (std::system(fmt::format("taskset -c {} true >/dev/null 2>&1", cpu).c_str()) != 0) {
        GTEST_SKIP() << "taskset is not available (or may not pin to CPU " << cpu << ")";
    }
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
    const std::filesystem::path out =
        std::filesystem::path(::testing::TempDir()) / fmt::format("tandem_determinism_{}.bin", ::getpid());
    struct Cleanup {  // also when an assertion below returns early
        std::filesystem::path file;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove(file, ec);
            std::filesystem::remove(file.string() + ".stdout", ec);
        }
    } cleanup{out};
    std::filesystem::remove(out);
    const std::string cmd = fmt::format(
        "{}='{}' taskset -c {} '{}' --gtest_filter=Determinism.DISABLED_PinnedRunHelper "
        "--gtest_also_run_disabled_tests >'{}.stdout' 2>&1",
        kOutEnv, out.string(), cpu, exe.string(), out.string());
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "pinned run failed: " << cmd;

    const ProgramResult here = run_program(4, DataMode::Functional);
    std::ifstream f(out, std::ios::binary);
    ASSERT_TRUE(f.good()) << "no output from the pinned run";
    std::string header;
    std::getline(f, header);
    EXPECT_EQ(header, "cpus=1") << "the child was not pinned to one core";
    std::stringstream rest;
    rest << f.rdbuf();
    const std::string pinned = rest.str();
    const std::string mine = digest_text(here);
    EXPECT_EQ(pinned.size(), mine.size());
    EXPECT_TRUE(pinned == mine) << "the run pinned to CPU " << cpu << " differs from the unpinned run";
}

}  // namespace determinism_test
}  // namespace tandem
