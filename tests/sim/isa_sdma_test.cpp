// TGET_ASYNC and WAIT_ASYNC (sim/isa/isa_sdma.cpp): a peer's window copied into local GM by the
// chip's SDMA engine. Expected times are computed by hand from the profile's numbers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_sdma_test {

constexpr SimTime kTolPs = 2;

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

std::vector<InstrRecord> of(const std::vector<InstrRecord>& log, Opcode op) {
    std::vector<InstrRecord> out;
    for (const InstrRecord& r : log)
        if (r.op == op && r.rank == 0) out.push_back(r);
    return out;
}

SimTime issue() { return cycles_to_ps(profile().pipes.scalar_issue_cycles, profile().chip.core_clock_mhz); }
SimTime poll() { return cycles_to_ps(profile().pipes.twait_poll_cycles, profile().chip.core_clock_mhz); }
// One copy on the engine, its queue empty: the fixed cost, then the bytes at the engine's rate.
SimTime copy_ps(std::int64_t bytes) {
    return from_ns(profile().interconnect.sdma_latency_ns) +
           bytes_at_gib_s(static_cast<double>(bytes), profile().interconnect.sdma_gib_s);
}

void fill_f16(GmAllocation& a, std::int64_t count, const std::function<float(std::int64_t)>& value) {
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint16_t h = float_to_half(value(i));
        std::memcpy(a.data.data() + i * 2, &h, 2);
    }
}

struct TwoChips {
    static constexpr int kRows = 64, kCols = 1024;
    static constexpr std::int64_t kBytes = std::int64_t{kRows} * kCols * 2;
    Runtime rt{profile(), ClusterOptions{2, DataMode::Functional, true}};
    GmAllocation& window = rt.cluster().chip(1).gm.allocate("window", 2 * kBytes, /*shared=*/true);
    GmAllocation& dst = rt.host(0).malloc("dst", 2 * kBytes);
    GmAllocation& priv = rt.cluster().chip(1).gm.allocate("private", kBytes, /*shared=*/false);
    GmTensor src_half(int h) { return GmTensor(window, h * kBytes, kRows, kCols, kCols, DType::F16); }
    GmTensor dst_half(int h) { return GmTensor(dst, h * kBytes, kRows, kCols, kCols, DType::F16); }

    TwoChips() { fill_f16(window, 2 * kRows * kCols, [](std::int64_t i) { return float(i % 91) - 45.0f; }); }

    // Runs `body` as one AIV block of rank 0.
    void run(std::function<Task(BlockCtx&)> body) {
        rt.run_hosts([&](HostContext& host) {
            if (host.rank() != 0) return;
            Stream& s = host.create_stream("comm");
            s.launch(KernelLaunch{"sdma", CoreType::AIV, 1, body});
            s.synchronize();
        });
    }
};

// The scalar issues the copy and goes on; WAIT_ASYNC resumes one poll after the copy's end,
// which is the fixed cost plus the bytes at sdma_gib_s; the bytes are in local GM.
TEST(TgetAsync, CopiesThePeerWindowAtTheEnginesRateWhileTheScalarGoesOn) {
    TwoChips c;
    c.run([&](BlockCtx& b) -> Task {
        const AsyncEvent done = co_await TGET_ASYNC(b, c.dst_half(0), c.src_half(0));
        TSCALAR(b, 10);  // the scalar is free meanwhile
        WAIT_ASYNC(b, done);
    });
    const auto log = c.rt.cluster().event_log();
    const auto copies = of(log, Opcode::TGET_ASYNC);
    const auto waits = of(log, Opcode::WAIT_ASYNC);
    const auto scalar = of(log, Opcode::SCALAR);
    ASSERT_EQ(copies.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    ASSERT_EQ(scalar.size(), 1u);
    EXPECT_EQ(copies[0].pipe, Pipe::S);
    EXPECT_EQ(copies[0].peer, 1);
    EXPECT_EQ(copies[0].bytes, TwoChips::kBytes);
    EXPECT_EQ(copies[0].end - copies[0].start, issue());
    EXPECT_NEAR(copies[0].visible - copies[0].end, copy_ps(TwoChips::kBytes), kTolPs);
    EXPECT_EQ(scalar[0].start, copies[0].end);  // not held up by the copy
    EXPECT_LT(scalar[0].end, copies[0].visible);
    EXPECT_EQ(waits[0].end, copies[0].visible + poll());
    EXPECT_EQ(waits[0].visible, copies[0].visible);
    EXPECT_EQ(std::memcmp(c.dst.data.data(), c.window.data.data(), TwoChips::kBytes), 0);
}

// A block's copies queue on the engine: the second starts when the first ends.
TEST(TgetAsync, ABlocksCopiesRunOneAfterAnother) {
    TwoChips c;
    c.run([&](BlockCtx& b) -> Task {
        const AsyncEvent first = co_await TGET_ASYNC(b, c.dst_half(0), c.src_half(0));
        const AsyncEvent second = co_await TGET_ASYNC(b, c.dst_half(1), c.src_half(1));
        WAIT_ASYNC(b, second);
        WAIT_ASYNC(b, first);  // already complete: one issue and one poll
    });
    const auto log = c.rt.cluster().event_log();
    const auto copies = of(log, Opcode::TGET_ASYNC);
    const auto waits = of(log, Opcode::WAIT_ASYNC);
    ASSERT_EQ(copies.size(), 2u);
    ASSERT_EQ(waits.size(), 2u);
    EXPECT_EQ(copies[1].start, copies[0].end);
    EXPECT_NEAR(copies[1].visible - copies[0].visible, copy_ps(TwoChips::kBytes), kTolPs);
    EXPECT_EQ(waits[1].end, waits[0].end + issue() + poll());
    EXPECT_EQ(std::memcmp(c.dst.data.data(), c.window.data.data(), 2 * TwoChips::kBytes), 0);
}

std::string error_of(const std::function<void(TwoChips&, BlockCtx&)>& bad) {
    TwoChips c;
    try {
        c.run([&](BlockCtx& b) -> Task {
            bad(c, b);
            co_return;
        });
    } catch (const SimError& e) {
        return e.what();
    }
    return "no error";
}

TEST(TgetAsync, RefusesADestinationOffTheRankASourceOutsideTheWindowAndMismatchedShapes) {
    EXPECT_NE(error_of([](TwoChips& c, BlockCtx& b) { (void)TGET_ASYNC(b, c.src_half(0), c.src_half(1)); })
                  .find("TGET_ASYNC: the destination must be this rank's GM (rank 0), not rank 1's 'window'"),
              std::string::npos);
    // A local source is allowed (a copy within the chip).
    EXPECT_EQ(error_of([](TwoChips& c, BlockCtx& b) { (void)TGET_ASYNC(b, c.dst_half(0), c.dst_half(1)); }), "no error");
    EXPECT_NE(error_of([](TwoChips& c, BlockCtx& b) {
                  (void)TGET_ASYNC(b, c.dst_half(0),
                                   GmTensor(c.priv, 0, TwoChips::kRows, TwoChips::kCols, TwoChips::kCols, DType::F16));
              }).find("peer-window access violation: TGET_ASYNC from rank 0 reads rank 1's 'private'"),
              std::string::npos);
    EXPECT_NE(error_of([](TwoChips& c, BlockCtx& b) {
                  (void)TGET_ASYNC(b, GmTensor(c.dst, 0, 32, TwoChips::kCols, TwoChips::kCols, DType::F16), c.src_half(0));
              }).find("differ in shape or dtype"),
              std::string::npos);
}

}  // namespace isa_sdma_test
}  // namespace tandem
