// Every kernel fault ends the run with one SimError from Runtime::run_hosts whose message names
// what went wrong and where: no crash, no hang. Shapes are small so each run is quick.
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace sim_errors_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

// Runs `program` on every rank's host and expects the run to fail with a SimError whose message
// contains every one of `parts`. Returns the message.
std::string expect_run_error(Runtime& rt, const std::function<void(HostContext&)>& program,
                             std::initializer_list<std::string> parts) {
    try {
        rt.run_hosts(program);
    } catch (const SimError& e) {
        const std::string msg = e.what();
        ::testing::Test::RecordProperty("message", msg);
        for (const std::string& part : parts) {
            EXPECT_NE(msg.find(part), std::string::npos) << "message lacks '" << part << "':\n" << msg;
        }
        return msg;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected SimError, got another exception: " << e.what();
        return {};
    }
    ADD_FAILURE() << "expected the run to fail";
    return {};
}

// One kernel on rank 0's stream "s0".
std::function<void(HostContext&)> on_rank0(const std::string& name, CoreType type, int blocks, KernelFn fn) {
    return [=](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("s0");
        s.launch(KernelLaunch{name, type, blocks, fn});
        s.synchronize();
    };
}

ClusterOptions small(int ranks = 1) { return ClusterOptions{ranks, DataMode::Functional, false}; }

// The context prefix every kernel fault carries.
std::string where(const std::string& kernel, int block, CoreType type) {
    return fmt::format("rank 0, stream 's0', kernel '{}', block {} on {} core", kernel, block, core_type_name(type));
}

// ---- local buffers ------------------------------------------------------------------------

TEST(SimErrors, L1OverflowNamesTileMemoryAndBytes) {
    Runtime rt(profile(), small());
    const std::int64_t cap = profile().chip.l1_bytes;
    // Two tiles fill all but 64 KiB; the third (128 KiB) does not fit.
    const int half_rows = static_cast<int>((cap - 65536) / 2 / 512);
    expect_run_error(rt, on_rank0("ovf", CoreType::AIC, 1, [=](BlockCtx& b) -> Task {
                         b.alloc_tile(MemKind::L1, half_rows, 256, DType::F16, "first");
                         b.alloc_tile(MemKind::L1, half_rows, 256, DType::F16, "second");
                         b.alloc_tile(MemKind::L1, 256, 256, DType::F16, "bigTile");
                         co_return;
                     }),
                     {where("ovf", 0, CoreType::AIC), "L1 buffer overflow", "'bigTile'", "131072 bytes",
                      fmt::format("{} of {} bytes", 2 * std::int64_t{half_rows} * 512, cap)});
}

TEST(SimErrors, UbOverflowOnVectorCore) {
    Runtime rt(profile(), small());
    const std::int64_t cap = profile().chip.ub_bytes;
    const int rows = static_cast<int>(cap / 1024) + 1;  // one row of 256 fp32 too many
    expect_run_error(rt, on_rank0("ovf", CoreType::AIV, 3, [=](BlockCtx& b) -> Task {
                         if (b.block_idx() == 2) b.alloc_tile(MemKind::UB, rows, 256, DType::F32, "ubAcc");
                         co_return;
                     }),
                     {where("ovf", 2, CoreType::AIV), "UB buffer overflow", "'ubAcc'",
                      fmt::format("{} bytes", std::int64_t{rows} * 1024), fmt::format("of {} bytes", cap)});
}

// ---- global memory ------------------------------------------------------------------------

TEST(SimErrors, GmTensorOutOfBounds) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 64 * 64 * 2);
    expect_run_error(rt, on_rank0("oob", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                         Tile& ub = b.alloc_tile(MemKind::UB, 64, 64, DType::F16, "ub");
                         // 64 rows starting one row in: runs 128 bytes past the end.
                         co_await TLOAD(ub, GmTensor(a, 128, 64, 64, 64, DType::F16));
                     }),
                     {where("oob", 0, CoreType::AIV), "GM access out of bounds on rank 0", "'A'", "128 bytes past",
                      "8192 bytes"});
}

TEST(SimErrors, GmSubTensorOutOfBounds) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 64 * 64 * 2);
    expect_run_error(rt, on_rank0("oob", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                         Tile& ub = b.alloc_tile(MemKind::UB, 16, 64, DType::F16, "ub");
                         co_await TLOAD(ub, GmTensor(a, 0, 64, 64, 64, DType::F16).sub(56, 0, 16, 64));
                     }),
                     {"GM access out of bounds on rank 0", "rows [56, 72)", "'A'"});
}

TEST(SimErrors, SignalAddressOutsideAnyAllocation) {
    Runtime rt(profile(), small(2));
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 16, true);
    expect_run_error(rt, on_rank0("sig", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                         TNOTIFY(b, SignalAddr{1, flags.base + 16}, 1, NotifyOp::Set);
                         co_return;
                     }),
                     {where("sig", 0, CoreType::AIV), "GM access out of bounds on rank 1",
                      fmt::format("{:#x}", flags.base + 16)});
}

TEST(SimErrors, PeerWindowAccessToNonSharedAllocation) {
    Runtime rt(profile(), small(2));
    GmAllocation& src = rt.host(0).malloc("src", 16 * 64 * 2);
    GmAllocation& priv = rt.host(1).malloc("privateBuf", 16 * 64 * 2);  // not in rank 1's window
    expect_run_error(rt, on_rank0("put", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                         Tile& ub = b.alloc_tile(MemKind::UB, 16, 64, DType::F16, "ub");
                         co_await TPUT(GmTensor(priv, 0, 16, 64, 64, DType::F16), GmTensor(src, 0, 16, 64, 64, DType::F16), ub);
                     }),
                     {where("put", 0, CoreType::AIV), "peer-window access violation", "from rank 0",
                      "rank 1's 'privateBuf'", "not in its peer window"});
}

TEST(SimErrors, PeerWindowReadOfNonSharedAllocation) {
    Runtime rt(profile(), small(2));
    GmAllocation& dst = rt.host(0).malloc("dst", 16 * 64 * 2);
    GmAllocation& priv = rt.host(1).malloc("secret", 16 * 64 * 2);
    expect_run_error(rt, on_rank0("get", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                         Tile& ub = b.alloc_tile(MemKind::UB, 16, 64, DType::F16, "ub");
                         co_await TGET(GmTensor(dst, 0, 16, 64, 64, DType::F16), GmTensor(priv, 0, 16, 64, 64, DType::F16), ub);
                     }),
                     {"peer-window access violation", "TLOAD from rank 0", "rank 1's 'secret'"});
}

// ---- wrong core type ----------------------------------------------------------------------

TEST(SimErrors, MatmulOperandsOnVectorCore) {
    // A vector core has no cube memories, so a TMATMUL there cannot even get its operands.
    Runtime rt(profile(), small());
    expect_run_error(rt, on_rank0("mm", CoreType::AIV, 1, [](BlockCtx& b) -> Task {
                         Tile& a = b.alloc_tile(MemKind::L0A, 16, 16, DType::F16, "aTile");
                         Tile& bb = b.alloc_tile(MemKind::L0B, 16, 16, DType::F16, "bTile");
                         Tile& c = b.alloc_tile(MemKind::L0C, 16, 16, DType::F32, "cTile");
                         TMATMUL(c, a, bb);
                         co_return;
                     }),
                     {where("mm", 0, CoreType::AIV), "'aTile'", "AIV core has no L0A memory"});
}

TEST(SimErrors, CubePipeSyncOnVectorCore) {
    Runtime rt(profile(), small());
    expect_run_error(rt, on_rank0("flag", CoreType::AIV, 1, [](BlockCtx& b) -> Task {
                         set_flag(b, PIPE_M, PIPE_MTE3, 0);
                         co_return;
                     }),
                     {where("flag", 0, CoreType::AIV), "set_flag needs the CUBE pipe", "AIV core",
                      "wrong core type"});
}

TEST(SimErrors, VectorPipeBarrierOnCubeCore) {
    Runtime rt(profile(), small());
    expect_run_error(rt, on_rank0("bar", CoreType::AIC, 1, [](BlockCtx& b) -> Task {
                         pipe_barrier(b, PIPE_MTE3);
                         co_return;
                     }),
                     {where("bar", 0, CoreType::AIC), "pipe_barrier needs the MTE3 pipe", "AIC core",
                      "wrong core type"});
}

TEST(SimErrors, TloadIntoL0A) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 16 * 16 * 2);
    expect_run_error(rt, on_rank0("ld", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                         Tile& t = b.alloc_tile(MemKind::L0A, 16, 16, DType::F16, "aTile");
                         co_await TLOAD(t, GmTensor(a, 0, 16, 16, 16, DType::F16));
                     }),
                     {where("ld", 0, CoreType::AIC), "TLOAD into L0A tile 'aTile'", "L1 (AIC) or UB (AIV)"});
}

TEST(SimErrors, TstoreFromL1) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 16 * 16 * 2);
    expect_run_error(rt, on_rank0("st", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                         Tile& t = b.alloc_tile(MemKind::L1, 16, 16, DType::F16, "aMat");
                         co_await TSTORE(GmTensor(a, 0, 16, 16, 16, DType::F16), t);
                     }),
                     {"TSTORE from L1 tile 'aMat'", "L0C", "UB"});
}

// ---- synchronisation ----------------------------------------------------------------------

TEST(SimErrors, TwaitThatCanNeverBeSatisfiedIsADeadlockReport) {
    Runtime rt(profile(), ClusterOptions{2, DataMode::TimingOnly, false});
    GmAllocation& flags = rt.cluster().chip(1).gm.allocate("flags", 64, true);
    const SignalAddr flag{1, flags.base + 8};
    const std::string msg = expect_run_error(
        rt,
        [&](HostContext& host) {
            Stream& s = host.create_stream("comm");
            if (host.rank() == 0) {
                s.launch(KernelLaunch{"notify", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                    TNOTIFY(b, flag, 1, NotifyOp::AtomicAdd);  // only ever reaches 1
                    co_return;
                }});
            } else {
                s.launch(KernelLaunch{"wait", CoreType::AIV, 3, [&](BlockCtx& b) -> Task {
                    if (b.block_idx() == 2) co_await TWAIT(b, flag, CmpOp::EQ, 2);
                }});
            }
            s.synchronize();
        },
        {"deadlock", "rank 1", "stream 'comm'", "kernel 'wait'", "block 2", "TWAIT on rank 1 'flags'+0x8",
         "== 2", "seen 1"});
    // One clear report: exactly one waiter listed.
    EXPECT_EQ(msg.find("block 2", msg.find("block 2") + 1), std::string::npos) << msg;
}

TEST(SimErrors, TwaitOnSignalNobodyWritesWithHostsDone) {
    // Every host is waiting in synchronize and nothing can write the signal: still reported.
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    GmAllocation& flags = rt.cluster().chip(0).gm.allocate("ready", 16, true);
    expect_run_error(rt, on_rank0("spin", CoreType::AIC, 2, [&](BlockCtx& b) -> Task {
                         co_await TWAIT(b, SignalAddr{0, flags.base + 4}, CmpOp::GT, 0);
                     }),
                     {"deadlock", "rank 0, stream 's0', kernel 'spin', block 0", "block 1", "'ready'+0x4", "> 0",
                      "seen 0"});
}

TEST(SimErrors, WaitFlagWithoutSetFlag) {
    Runtime rt(profile(), small());
    expect_run_error(rt, on_rank0("wf", CoreType::AIC, 1, [](BlockCtx& b) -> Task {
                         wait_flag(b, PIPE_MTE2, PIPE_MTE1, 3);
                         co_return;
                     }),
                     {where("wf", 0, CoreType::AIC), "wait_flag(MTE2, MTE1, 3)", "no matching set_flag"});
}

TEST(SimErrors, HazardExtractBeforeLoadFinishes) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 64 * 64 * 2);
    expect_run_error(rt, on_rank0("hz", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                         Tile& aMat = b.alloc_tile(MemKind::L1, 64, 64, DType::F16, "aMat");
                         Tile& aTile = b.alloc_tile(MemKind::L0A, 64, 64, DType::F16, "aTile");
                         co_await TLOAD(aMat, GmTensor(a, 0, 64, 64, 64, DType::F16));
                         TEXTRACT(aTile, aMat, 0, 0);  // missing set_flag/wait_flag(MTE2 -> MTE1)
                     }),
                     {where("hz", 0, CoreType::AIC), "hazard: TEXTRACT", "tile 'aMat'", "before the TLOAD",
                      "missing set_flag/wait_flag"});
}

TEST(SimErrors, HazardLoadOverwritesTileStillBeingRead) {
    Runtime rt(profile(), small());
    GmAllocation& a = rt.host(0).malloc("A", 64 * 64 * 2);
    expect_run_error(rt, on_rank0("war", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                         Tile& aMat = b.alloc_tile(MemKind::L1, 64, 64, DType::F16, "aMat");
                         Tile& aTile = b.alloc_tile(MemKind::L0A, 64, 64, DType::F16, "aTile");
                         co_await TLOAD(aMat, GmTensor(a, 0, 64, 64, 64, DType::F16));
                         set_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
                         wait_flag(b, PIPE_MTE2, PIPE_MTE1, 0);
                         TEXTRACT(aTile, aMat, 0, 0);
                         // Reload L1 while MTE1 still reads it (missing set_flag/wait_flag MTE1 -> MTE2).
                         co_await TLOAD(aMat, GmTensor(a, 0, 64, 64, 64, DType::F16));
                     }),
                     {"hazard: TLOAD overwrites tile 'aMat'", "while an earlier read"});
}

TEST(SimErrors, HazardMatmulBeforeExtractFinishes) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    expect_run_error(rt, on_rank0("mm", CoreType::AIC, 1, [](BlockCtx& b) -> Task {
                         Tile& aMat = b.alloc_tile(MemKind::L1, 32, 32, DType::F16, "aMat");
                         Tile& bMat = b.alloc_tile(MemKind::L1, 32, 32, DType::F16, "bMat");
                         Tile& aT = b.alloc_tile(MemKind::L0A, 32, 32, DType::F16, "aTile");
                         Tile& bT = b.alloc_tile(MemKind::L0B, 32, 32, DType::F16, "bTile");
                         Tile& c = b.alloc_tile(MemKind::L0C, 32, 32, DType::F32, "cTile");
                         TEXTRACT(aT, aMat, 0, 0);
                         TEXTRACT(bT, bMat, 0, 0);
                         TMATMUL(c, aT, bT);  // missing set_flag/wait_flag(MTE1 -> M)
                         co_return;
                     }),
                     {"hazard: TMATMUL", "reading tile 'aTile'", "before the TEXTRACT"});
}

// After a failed run nothing is left hanging: the runtime can be torn down and a new one works.
TEST(SimErrors, RunAfterAFailureStillWorks) {
    {
        Runtime rt(profile(), small());
        expect_run_error(rt, on_rank0("wf", CoreType::AIV, 4, [](BlockCtx& b) -> Task {
                             if (b.block_idx() == 3) wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                             co_return;
                         }),
                         {"block 3", "no matching set_flag"});
    }
    Runtime rt(profile(), small());
    auto run = test::run_one_kernel(rt, CoreType::AIV, 4, [](BlockCtx& b) -> Task {
        pipe_barrier(b, PIPE_ALL);
        co_return;
    });
    EXPECT_GT(run.stats.end, run.stats.start);
}

}  // namespace sim_errors_test
}  // namespace tandem
