// A TWAIT on a flag raised by a kernel on another stream of the same rank, launched FIRST: the
// producer runs ahead, so its TNOTIFY reaches the signal store at a window barrier before the
// consumer's block (started later) reaches its TWAIT, and the write becomes visible a little after
// the TWAIT issues, inside the window in which the block starts waiting. The block must resume at
// exactly that visible time (plus the poll), in that window: left to the next window's check it
// resumed below that window's lower bound, at a time the coordinator had already forgotten (the
// barrier folds the signal history and the GM fabric's bookings), so the TWAIT ended at its own
// issue time instead of the write's, and the TLOAD after it failed with "before its forgotten
// history" (reproduced by matmul_all_scatter producer_consumer with the GEMM launched first).
#include <gtest/gtest.h>

#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_time.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace twait_across_streams_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

InstrRecord only(const std::vector<InstrRecord>& log, Opcode op) {
    std::vector<InstrRecord> found;
    for (const InstrRecord& r : log)
        if (r.op == op) found.push_back(r);
    EXPECT_EQ(found.size(), 1u) << "records of opcode " << static_cast<int>(op);
    return found.empty() ? InstrRecord{} : found.front();
}

struct PairTimes {
    InstrRecord notify;
    InstrRecord wait;
    InstrRecord load;
    SimTime lookahead = 0;
};

// Rank 0, two streams: "producer" (launched first, on an AIC core like a GEMM; two kernels on
// cores of one type would share the cores' pipe state, see the report) spins `spins` scalar barriers, raises the flag,
// then keeps its core busy long enough that its block's end is no event near the consumer's
// start; "consumer" (launched second) waits on the flag, then loads a tile from GM.
PairTimes run_pair(int spins, DataMode mode) {
    Runtime rt(profile(), ClusterOptions{1, mode, true});
    GmAllocation& flags = rt.cluster().chip(0).gm.allocate("flags", 64, true);
    const SignalAddr flag{0, flags.base};
    GmAllocation& x = rt.host(0).malloc("X", 16 * 256 * 2);
    rt.run_hosts([&](HostContext& host) {
        Stream& producer = host.create_stream("producer");
        Stream& consumer = host.create_stream("consumer");
        producer.launch(KernelLaunch{"producer", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            for (int i = 0; i < spins; ++i) pipe_barrier(b, PIPE_ALL);
            TNOTIFY(b, flag, 1, NotifyOp::Set);
            for (int i = 0; i < 2 * spins; ++i) pipe_barrier(b, PIPE_ALL);
            co_return;
        }});
        consumer.launch(KernelLaunch{"consumer", CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "ub");
            co_await TWAIT(b, flag, CmpOp::EQ, 1);
            co_await TLOAD(ub, GmTensor(x, 0, 16, 256, 256, DType::F16));
        }});
        producer.synchronize();
        consumer.synchronize();
    });
    const auto log = rt.cluster().event_log();
    return PairTimes{only(log, Opcode::TNOTIFY), only(log, Opcode::TWAIT), only(log, Opcode::TLOAD),
                     rt.cluster().coordinator().lookahead()};
}

// The producer's spin count that makes its flag visible `offset` after its kernel started,
// measured from two probe runs (the spins cost a fixed time each).
int spins_for(SimTime offset) {
    const PairTimes a = run_pair(100, DataMode::TimingOnly);
    const PairTimes b = run_pair(200, DataMode::TimingOnly);
    const double per_spin = static_cast<double>(b.notify.visible - a.notify.visible) / 100.0;
    const SimTime at_zero = a.notify.visible - static_cast<SimTime>(100.0 * per_spin);
    const SimTime producer_start = from_us(profile().host.launch_to_start_us);
    return static_cast<int>(static_cast<double>(producer_start + offset - at_zero) / per_spin);
}

// The flag becomes visible at 20%, 50% and 80% of the way from the TWAIT's issue to one lookahead
// after the consumer's start (the window the consumer starts in ends there).
TEST(TwaitAcrossStreams, ResumesWhenAFlagFromAnEarlierLaunchedStreamBecomesVisible) {
    const Profile& p = profile();
    const SimTime issue = cycles_to_ps(p.pipes.scalar_issue_cycles, p.chip.core_clock_mhz);
    const SimTime poll = cycles_to_ps(p.pipes.twait_poll_cycles, p.chip.core_clock_mhz);
    const SimTime lookahead = Runtime(profile(), ClusterOptions{1, DataMode::TimingOnly, false}).cluster().coordinator().lookahead();
    // The consumer starts one host launch call after the producer.
    const SimTime consumer_offset = from_us(p.host.launch_host_us);
    for (const double fraction : {0.2, 0.5, 0.8}) {
        SCOPED_TRACE(fraction);
        const int spins = spins_for(consumer_offset + issue + static_cast<SimTime>(fraction * static_cast<double>(lookahead - issue)));
        for (const DataMode mode : {DataMode::Functional, DataMode::TimingOnly}) {
            PairTimes t;
            ASSERT_NO_THROW(t = run_pair(spins, mode));
            // The case under test: the write turns visible after the TWAIT issued, within a
            // lookahead of the consumer's start, and was sent before the consumer started.
            ASSERT_GT(t.notify.visible, t.wait.start + issue);
            ASSERT_LT(t.notify.visible, t.wait.start + t.lookahead);
            ASSERT_LT(t.notify.end, t.wait.start);
            EXPECT_EQ(t.wait.end, t.notify.visible + poll);
            EXPECT_GE(t.load.start, t.wait.end);
        }
    }
}

// The same pair run again gives the same times (the consumer's wake-up does not depend on which
// host thread joined first).
TEST(TwaitAcrossStreams, RepeatedRunsGiveIdenticalTimes) {
    const Profile& p = profile();
    const int spins = spins_for(from_us(p.host.launch_host_us) + from_ns(p.interconnect.local_atomic_latency_ns) / 2);
    const PairTimes first = run_pair(spins, DataMode::TimingOnly);
    for (int i = 0; i < 4; ++i) {
        const PairTimes again = run_pair(spins, DataMode::TimingOnly);
        EXPECT_EQ(again.wait.end, first.wait.end);
        EXPECT_EQ(again.load.end, first.load.end);
    }
}

}  // namespace twait_across_streams_test
}  // namespace tandem
