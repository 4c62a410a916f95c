// The kernel sanitizer (--sanitize): each class of bug comes as a deliberately broken kernel the
// sanitizer must catch, naming the class and both accesses, and its correct twin that it must
// pass. These kernels live here only (not in the op list). Shapes are one small tile.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace sanitizer_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

ClusterOptions sanitized(int ranks, DataMode mode = DataMode::Functional) {
    ClusterOptions o{ranks, mode, false};
    o.sanitize = true;
    return o;
}

std::string all_text(const std::vector<SanViolation>& v) {
    std::string s;
    for (const auto& x : v) s += x.text + "\n";
    return s;
}

void expect_has(const std::string& text, std::initializer_list<std::string> parts) {
    for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "report lacks '" << p << "':\n" << text;
}

// ---- classes 1 and 2: a producer on rank 0 puts a tile into rank 1's window, a consumer on
// rank 1 reads it ---------------------------------------------------------------------------

enum class Handoff {
    NoFlag,             // broken: the consumer reads without waiting for anything
    FlagBeforeData,     // broken: TNOTIFY right after the remote TSTORE, no barrier
    FlagAfterBarrier,   // correct: pipe_barrier(PIPE_ALL), then TNOTIFY (the published kernel)
};

constexpr int kRows = 16;
constexpr int kCols = 64;

std::vector<SanViolation> run_handoff(Handoff h, DataMode mode = DataMode::Functional) {
    Runtime rt(profile(), sanitized(2, mode));
    Cluster& c = rt.cluster();
    const std::int64_t bytes = kRows * kCols * 2;
    GmAllocation& src = c.chip(0).gm.allocate("src", bytes);
    GmAllocation& inbox = c.chip(1).gm.allocate("inbox", bytes, true);
    GmAllocation& flags = c.chip(1).gm.allocate("ready", 64, true);
    GmAllocation& dst = c.chip(1).gm.allocate("dst", bytes);
    const SignalAddr ready{1, flags.base};
    const GmTensor srcT(src, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor inboxT(inbox, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor dstT(dst, 0, kRows, kCols, kCols, DType::F16);
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        if (host.rank() == 0) {
            s.launch(KernelLaunch{"producer", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                co_await TLOAD(ub, srcT);
                set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                co_await TSTORE(inboxT, ub);
                if (h == Handoff::FlagAfterBarrier) pipe_barrier(b, PIPE_ALL);
                if (h != Handoff::NoFlag) TNOTIFY(b, ready, 1, NotifyOp::Set);
            }});
        } else {
            s.launch(KernelLaunch{"consumer", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                if (h != Handoff::NoFlag) co_await TWAIT(b, ready, CmpOp::EQ, 1);
                co_await TLOAD(ub, inboxT);
                set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                co_await TSTORE(dstT, ub);
            }});
        }
        s.synchronize();
    });
    return c.sanitizer()->check();
}

TEST(Sanitizer, UnsynchronisedReadIsCaughtWithBothAccesses) {
    const auto v = run_handoff(Handoff::NoFlag);
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    EXPECT_EQ(v[0].cls, kClassUnsyncRead);
    expect_has(v[0].text, {"[unsynchronised read]", "write: rank 0, stream 'comm', kernel 'producer', block 0, TSTORE",
                           "read: rank 1, stream 'comm', kernel 'consumer', block 0, TLOAD", "rank 1 'inbox'",
                           "16 rows of 128 bytes", " us"});
}

TEST(Sanitizer, FlagRaisedBeforeTheDataIsCaughtNamingTheFlag) {
    const auto v = run_handoff(Handoff::FlagBeforeData);
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    EXPECT_EQ(v[0].cls, kClassFlagBeforeData);
    ::testing::Test::RecordProperty("report", v[0].text);  // docs/SANITIZER.md quotes it
    expect_has(v[0].text, {"[flag before data]", "flag: rank 0, stream 'comm', kernel 'producer', block 0, TNOTIFY(set 1) on rank 1 'ready'+0x0",
                           "write: rank 0, stream 'comm', kernel 'producer', block 0, TSTORE",
                           "read: rank 1, stream 'comm', kernel 'consumer', block 0, TLOAD"});
}

TEST(Sanitizer, PublishedHandoffIsClean) {
    EXPECT_TRUE(run_handoff(Handoff::FlagAfterBarrier).empty());
}

// An SDMA copy (TGET_ASYNC) published to another block: done at WAIT_ASYNC, not at a
// pipe_barrier(PIPE_ALL), which drains the core's pipes but not the engine.
std::vector<SanViolation> run_sdma_handoff(bool wait_async) {
    Runtime rt(profile(), sanitized(2));
    Cluster& c = rt.cluster();
    const std::int64_t bytes = kRows * kCols * 2;
    GmAllocation& window = c.chip(1).gm.allocate("window", bytes, true);
    GmAllocation& landed = c.chip(0).gm.allocate("landed", bytes);
    GmAllocation& flags = c.chip(0).gm.allocate("ready", 64);
    GmAllocation& dst = c.chip(0).gm.allocate("dst", bytes);
    const SignalAddr ready{0, flags.base};
    const GmTensor windowT(window, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor landedT(landed, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor dstT(dst, 0, kRows, kCols, kCols, DType::F16);
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"pull", CoreType::AIV, 2, [&](BlockCtx& b) -> Task {
            if (b.block_idx() == 0) {
                const AsyncEvent done = co_await TGET_ASYNC(b, landedT, windowT);
                pipe_barrier(b, PIPE_ALL);
                if (wait_async) WAIT_ASYNC(b, done);
                TNOTIFY(b, ready, 1, NotifyOp::Set);
            } else {
                Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                co_await TWAIT(b, ready, CmpOp::EQ, 1);
                co_await TLOAD(ub, landedT);
                set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                co_await TSTORE(dstT, ub);
            }
        }});
        s.synchronize();
    });
    return c.sanitizer()->check();
}

TEST(Sanitizer, AnSdmaCopyIsPublishedByWaitAsyncNotByAPipeBarrier) {
    const auto v = run_sdma_handoff(false);
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    EXPECT_EQ(v[0].cls, kClassFlagBeforeData);
    expect_has(v[0].text, {"[flag before data]", "block 0, TGET_ASYNC", "block 1, TLOAD", "rank 0 'landed'"});
    EXPECT_TRUE(run_sdma_handoff(true).empty()) << all_text(run_sdma_handoff(true));
}

TEST(Sanitizer, TimingOnlyRunsAreCheckedTheSame) {
    EXPECT_EQ(all_text(run_handoff(Handoff::FlagBeforeData, DataMode::TimingOnly)),
              all_text(run_handoff(Handoff::FlagBeforeData)));
    EXPECT_TRUE(run_handoff(Handoff::FlagAfterBarrier, DataMode::TimingOnly).empty());
}

TEST(Sanitizer, ReportsAreDeterministic) {
    const std::string first = all_text(run_handoff(Handoff::NoFlag));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(all_text(run_handoff(Handoff::NoFlag)), first);
}

// Kernel boundaries on one stream order a kernel's writes before the next kernel's reads; on two
// streams nothing does unless the host synchronises in between.
std::vector<SanViolation> run_two_kernels(bool same_stream) {
    Runtime rt(profile(), sanitized(1));
    Cluster& c = rt.cluster();
    GmAllocation& buf = c.chip(0).gm.allocate("buf", kRows * kCols * 4);
    GmAllocation& out = c.chip(0).gm.allocate("out", kRows * kCols * 4);
    const GmTensor bufT(buf, 0, kRows, kCols, kCols, DType::F32);
    const GmTensor outT(out, 0, kRows, kCols, kCols, DType::F32);
    rt.run_hosts([&](HostContext& host) {
        Stream& a = host.create_stream("a");
        Stream& b = same_stream ? a : host.create_stream("b");
        a.launch(KernelLaunch{"writer", CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
            Tile& ub = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "ubTile");
            TADDS(ub, ub, 1.0f);
            set_flag(blk, PIPE_V, PIPE_MTE3, 0);
            wait_flag(blk, PIPE_V, PIPE_MTE3, 0);
            co_await TSTORE(bufT, ub);
        }});
        b.launch(KernelLaunch{"reader", CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
            Tile& ub = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "ubTile");
            co_await TLOAD(ub, bufT);
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, 0);
            co_await TSTORE(outT, ub);
        }});
        a.synchronize();
        if (!same_stream) b.synchronize();
    });
    return c.sanitizer()->check();
}

TEST(Sanitizer, KernelBoundaryOnOneStreamOrdersAccesses) { EXPECT_TRUE(run_two_kernels(true).empty()); }

TEST(Sanitizer, TwoStreamsWithoutSynchronisationRace) {
    const auto v = run_two_kernels(false);
    ASSERT_FALSE(v.empty());
    expect_has(v[0].text, {"[unsynchronised read]", "kernel 'writer'", "kernel 'reader'", "'buf'"});
}

// ---- the bytes an access touches: blocks storing into one 32-byte granule -------------------

// Each block b of one AIV kernel stores `stores[b]` = {first int32 word, words} of a 32-byte
// buffer after `delay[b]` scalar cycles, or (words < 0) reads -words words from there; nothing
// orders the blocks.
struct WordAccess {
    int first = 0;
    int words = 1;  // < 0: a read of -words words
    int delay = 0;
};

std::vector<SanViolation> run_word_accesses(const std::vector<WordAccess>& acc) {
    Runtime rt(profile(), sanitized(1));
    Cluster& c = rt.cluster();
    GmAllocation& buf = c.chip(0).gm.allocate("rows", 64);
    const GmTensor words(buf, 0, 1, 16, 16, DType::I32);
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        s.launch(KernelLaunch{"scatter", CoreType::AIV, static_cast<int>(acc.size()), [&](BlockCtx& b) -> Task {
            const WordAccess& a = acc[static_cast<std::size_t>(b.block_idx())];
            const int n = a.words < 0 ? -a.words : a.words;
            Tile& ub = b.alloc_tile(MemKind::UB, 1, n, DType::I32, "word");
            if (a.delay > 0) TSCALAR(b, a.delay);
            set_flag(b, PIPE_S, PIPE_MTE3, 0);
            wait_flag(b, PIPE_S, PIPE_MTE3, 0);
            if (a.words < 0) co_await TLOAD(ub, words.sub(0, a.first, 1, n));
            else co_await TSTORE(words.sub(0, a.first, 1, n), ub);
        }});
        s.synchronize();
    });
    return c.sanitizer()->check();
}

TEST(Sanitizer, StoresOfDifferentWordsOfOneGranuleDoNotConflict) {
    // The published MegaMoE FrontReorder's inverse step: 4-byte stores from many AIVs at once.
    EXPECT_TRUE(run_word_accesses({{0, 1, 0}, {1, 1, 0}, {7, 1, 0}, {2, 5, 0}}).empty())
        << all_text(run_word_accesses({{0, 1, 0}, {1, 1, 0}, {7, 1, 0}, {2, 5, 0}}));
}

TEST(Sanitizer, StoresSharingAByteOfAGranuleConflict) {
    const auto v = run_word_accesses({{0, 2, 0}, {1, 2, 0}});
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    expect_has(v[0].text, {"two plain writes", "'rows' bytes [0x0, 0x8)", "'rows' bytes [0x4, 0xc)"});
}

TEST(Sanitizer, AStoreOfPartOfAGranuleKeepsTheEarlierStoreOfTheRestChecked) {
    // Block 0 stores word 1, block 1 then word 0 (no conflict: other bytes), block 2 reads word 1
    // last, ordered with neither: the read races with block 0's store, which block 1's did not
    // replace.
    const auto v = run_word_accesses({{1, 1, 0}, {0, 1, 2000}, {1, -1, 4000}});
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    expect_has(v[0].text, {"[unsynchronised read]", "block 0, TSTORE", "block 2, TLOAD", "'rows' bytes [0x4, 0x8)"});
    // A read of word 0 only races with block 1's store.
    const auto w = run_word_accesses({{1, 1, 0}, {0, 1, 2000}, {0, -1, 4000}});
    ASSERT_EQ(w.size(), 1u) << all_text(w);
    expect_has(w[0].text, {"block 1, TSTORE", "block 2, TLOAD"});
}

// ---- class 3: stale flags: two launches of the same handoff reuse one flag word ------------

enum class Reuse {
    NoReset,    // broken: the second consumer's TWAIT passes at once on the first launch's value
    HostReset,  // correct: the host zeroes the flag between the launches
    Versioned,  // correct: launch k raises and waits for the value k
};

std::vector<SanViolation> run_reused_flag(Reuse r) {
    Runtime rt(profile(), sanitized(2));
    Cluster& c = rt.cluster();
    const std::int64_t bytes = kRows * kCols * 2;
    GmAllocation& src = c.chip(0).gm.allocate("src", bytes);
    GmAllocation& inbox = c.chip(1).gm.allocate("inbox", bytes, true);
    GmAllocation& flags = c.chip(1).gm.allocate("ready", 64, true);
    GmAllocation& dst = c.chip(1).gm.allocate("dst", bytes);
    const SignalAddr ready{1, flags.base};
    const GmTensor srcT(src, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor inboxT(inbox, 0, kRows, kCols, kCols, DType::F16);
    const GmTensor dstT(dst, 0, kRows, kCols, kCols, DType::F16);
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        for (int launch = 1; launch <= 2; ++launch) {
            const std::int32_t value = r == Reuse::Versioned ? launch : 1;
            if (host.rank() == 0) {
                s.launch(KernelLaunch{"producer", CoreType::AIV, 1, [&, value](BlockCtx& b) -> Task {
                    Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                    co_await TLOAD(ub, srcT);
                    set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                    wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                    co_await TSTORE(inboxT, ub);
                    pipe_barrier(b, PIPE_ALL);
                    TNOTIFY(b, ready, value, NotifyOp::Set);
                }});
            } else {
                s.launch(KernelLaunch{"consumer", CoreType::AIV, 1, [&, value](BlockCtx& b) -> Task {
                    Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                    co_await TWAIT(b, ready, CmpOp::EQ, value);
                    co_await TLOAD(ub, inboxT);
                    set_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                    wait_flag(b, PIPE_MTE2, PIPE_MTE3, 0);
                    co_await TSTORE(dstT, ub);
                }});
            }
            s.synchronize();
            host.barrier();  // the call is over on every rank
            if (r == Reuse::HostReset && host.rank() == 1) host.write_signals(flags.base, 1, 0);
            host.barrier();  // the reset lands before any rank's next launch
        }
    });
    return c.sanitizer()->check();
}

TEST(Sanitizer, StaleFlagFromAnEarlierLaunchIsCaught) {
    const auto v = run_reused_flag(Reuse::NoReset);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v[0].cls, kClassStaleFlag) << all_text(v);
    ::testing::Test::RecordProperty("report", v[0].text);  // docs/SANITIZER.md quotes it
    expect_has(v[0].text, {"[stale flag]", "flag: rank 1 'ready'+0x0",
                           "write: call 1, launch 1 of rank 0's stream 'comm': rank 0, stream 'comm', kernel 'producer', "
                           "block 0, TNOTIFY(set 1) on rank 1 'ready'+0x0 issued at",
                           "wait: call 3, launch 2 of rank 1's stream 'comm': rank 1, stream 'comm', kernel 'consumer', "
                           "block 0, TWAIT(== 1) issued at", "satisfied at"});
    // The second consumer then reads the inbox the second producer is still writing.
    EXPECT_NE(all_text(v).find("[unsynchronised read]"), std::string::npos) << all_text(v);
}

TEST(Sanitizer, FlagResetByTheHostBetweenLaunchesIsClean) {
    const auto v = run_reused_flag(Reuse::HostReset);
    EXPECT_TRUE(v.empty()) << all_text(v);
}

TEST(Sanitizer, VersionedFlagIsClean) {
    const auto v = run_reused_flag(Reuse::Versioned);
    EXPECT_TRUE(v.empty()) << all_text(v);
}


// A flag raised by a kernel of another stream in the same call (a producer stream run first and
// synchronised, as GemmCommAllKernel's GEMM before its comm kernel) is what the wait is for: the
// wait passes at once, and that is not stale, however many of the call's kernels wait on it.
TEST(Sanitizer, FlagOfAnotherStreamInTheSameCallIsNotStale) {
    Runtime rt(profile(), sanitized(1));
    Cluster& c = rt.cluster();
    GmAllocation& flags = c.chip(0).gm.allocate("ready", 64, true);
    const SignalAddr ready{0, flags.base};
    rt.run_hosts([&](HostContext& host) {
        Stream& gemm = host.create_stream("gemm");
        Stream& comm = host.create_stream("comm");
        for (int call = 1; call <= 2; ++call) {
            gemm.launch(KernelLaunch{"raise", CoreType::AIV, 1, [&, call](BlockCtx& b) -> Task {
                TNOTIFY(b, ready, call, NotifyOp::Set);
                co_return;
            }});
            gemm.synchronize();
            for (int poll = 0; poll < 2; ++poll) {  // two kernels of the call consume the same write
                comm.launch(KernelLaunch{"poll", CoreType::AIV, 1, [&, call](BlockCtx& b) -> Task {
                    co_await TWAIT(b, ready, CmpOp::EQ, call);
                }});
            }
            comm.synchronize();
            host.barrier();
        }
    });
    const auto v = c.sanitizer()->check();
    EXPECT_TRUE(v.empty()) << all_text(v);
}

// ---- class 5: disagreeing ranks --------------------------------------------------------------

// Each rank launches one kernel on stream 'comm' signed with its shape; rank 1's may differ.
std::vector<SanViolation> run_signed(const std::string& rank1_signature) {
    Runtime rt(profile(), sanitized(2));
    rt.run_hosts([&](HostContext& host) {
        Stream& s = host.create_stream("comm");
        KernelLaunch k{"all_gather", CoreType::AIV, 1, [](BlockCtx&) -> Task { co_return; }};
        s.launch(k);  // unsigned: not compared
        k.signature = host.rank() == 0 ? "M=256 K=512 dtype=f16" : rank1_signature;
        s.launch(k);
        s.synchronize();
    });
    return rt.cluster().sanitizer()->check();
}

TEST(Sanitizer, RanksLaunchingDifferentShapesAreCaught) {
    const auto v = run_signed("M=128 K=512 dtype=f16");
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    EXPECT_EQ(v[0].cls, kClassDisagreeingRanks);
    ::testing::Test::RecordProperty("report", v[0].text);  // docs/SANITIZER.md quotes it
    expect_has(v[0].text, {"[disagreeing ranks]", "launch 2 of stream 'comm'", "rank 0: kernel 'all_gather', M=256 K=512 dtype=f16",
                           "rank 1: kernel 'all_gather', M=128 K=512 dtype=f16"});
}

TEST(Sanitizer, RanksLaunchingTheSameShapeAreClean) { EXPECT_TRUE(run_signed("M=256 K=512 dtype=f16").empty()); }

std::vector<SanViolation> run_windows(std::int64_t rank1_bytes) {
    Runtime rt(profile(), sanitized(3));
    for (int r = 0; r < 3; ++r) rt.cluster().chip(r).gm.allocate("workspace", r == 1 ? rank1_bytes : 4096, true);
    rt.cluster().chip(2).gm.allocate("inbox", 256, true);  // on one rank only: nothing to compare
    rt.run_hosts([&](HostContext& host) { host.barrier(); });
    return rt.cluster().sanitizer()->check();
}

TEST(Sanitizer, WindowsOfDifferentSizesAreCaught) {
    const auto v = run_windows(2048);
    ASSERT_EQ(v.size(), 1u) << all_text(v);
    EXPECT_EQ(v[0].cls, kClassDisagreeingRanks);
    ::testing::Test::RecordProperty("report", v[0].text);
    expect_has(v[0].text, {"[disagreeing ranks]", "'workspace' is 4096 bytes on rank 0 and 2048 bytes on rank 1"});
}

TEST(Sanitizer, WindowsOfTheSameSizeAreClean) { EXPECT_TRUE(run_windows(4096).empty()); }

// ---- class 4: unschedulable spinners ---------------------------------------------------------

// Every block but the last waits for the last block's flag. With more blocks than cores the
// waiters hold every core and the last block never starts.
std::string run_spinners(int blocks) {
    Runtime rt(profile(), sanitized(1, DataMode::TimingOnly));
    GmAllocation& flags = rt.cluster().chip(0).gm.allocate("go", 64, true);
    const SignalAddr go{0, flags.base};
    try {
        test::run_one_kernel(rt, CoreType::AIV, blocks, [&](BlockCtx& b) -> Task {
            if (b.block_idx() == b.block_num() - 1) TNOTIFY(b, go, 1, NotifyOp::Set);
            else co_await TWAIT(b, go, CmpOp::EQ, 1);
        }, "spin");
    } catch (const SimError& e) {
        return classify_run_error(e.what()).text;
    }
    return {};
}

TEST(Sanitizer, UnschedulableSpinnersAreNamed) {
    const int cores = profile().chip.aiv_cores;
    const std::string r = run_spinners(cores + 1);
    expect_has(r, {"[unschedulable spinners]", "rank 0, stream 's0', kernel 'spin'",
                   fmt::format("{} blocks for {} cores", cores + 1, cores),
                   fmt::format("blocks {}..{} were never scheduled", cores, cores)});
}

TEST(Sanitizer, SpinnersThatFitOnTheCoresPass) { EXPECT_EQ(run_spinners(profile().chip.aiv_cores), ""); }

// ---- class 6: today's bounds checks join the report ------------------------------------------

TEST(Sanitizer, OutOfBoundsAccessJoinsTheReport) {
    for (const bool broken : {true, false}) {
        Runtime rt(profile(), sanitized(1));
        GmAllocation& buf = rt.cluster().chip(0).gm.allocate("buf", kRows * kCols * 2);
        std::string report;
        try {
            test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& ub = b.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "ubTile");
                const GmTensor whole(buf, 0, kRows, kCols, kCols, DType::F16);
                co_await TLOAD(ub, whole.sub(broken ? kRows / 2 : 0, 0, kRows, kCols));
            }, broken ? "oob" : "inb");
        } catch (const SimError& e) {
            report = classify_run_error(e.what()).text;
        }
        if (broken) {
            expect_has(report, {"[out of bounds / overflow]", "GM access out of bounds", "kernel 'oob'"});
        } else {
            EXPECT_EQ(report, "");
            EXPECT_TRUE(rt.cluster().sanitizer()->check().empty());
        }
    }
}

}  // namespace sanitizer_test
}  // namespace tandem
