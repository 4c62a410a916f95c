// Limits the simulator encodes (ids packed into bits, arrays sized by a constant) are checked
// where the ids are made: one SimError naming the quantity and the limit, never a silent wrap.
// And sim/'s messages name quantities, not command-line flags (the caller adds its own word).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/stream_cores.hpp"
#include "sim/exec/message.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sanitize/vector_clock.hpp"
#include "sim/sim_error.hpp"
#include "sim/trace/chrome_trace.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace sim_limits_test {

// The message of the SimError `fn` throws (fails the test when it throws none).
template <class Fn>
std::string error_of(Fn&& fn) {
    try {
        fn();
    } catch (const SimError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a SimError";
    return {};
}

void expect_contains(const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << "message lacks '" << part << "':\n" << message;
}

TEST(SimLimits, ARankHasAtMostSixteenStreams) {
    Runtime rt(test::b1_profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    int made = 0;
    const std::string msg = error_of([&] {
        rt.run_hosts([&](HostContext& host) {
            for (int s = 0; s <= kMaxStreamsPerRank; ++s) {
                host.create_stream(fmt::format("s{}", s));
                ++made;
            }
        });
    });
    EXPECT_EQ(made, kMaxStreamsPerRank);  // the 17th is refused, the 16 before it are made
    expect_contains(msg, "rank 0: stream 's16' would be stream 16 of its rank; a rank has at most 16 streams");
}

TEST(SimLimits, ACoreTypeHasAtMostTheCoresARecordCanName) {
    Profile p = test::b1_profile();
    p.chip.aiv_cores = kMaxCoresPerType + 1;
    const std::string msg = error_of([&] { StreamCores cores(p.chip); });
    expect_contains(msg, fmt::format("chip: {} AIV cores, at most {} per type", kMaxCoresPerType + 1, kMaxCoresPerType));
    p.chip.aiv_cores = kMaxCoresPerType;
    EXPECT_EQ(StreamCores(p.chip).count(CoreType::AIV), kMaxCoresPerType);
}

TEST(SimLimits, SanitizerThreadKeysHoldAtMostTwoToTheTwentyFourBlockParts) {
    EXPECT_NE(thread_key(3, 1, kMaxThreadSlots - 1), thread_key(3, 2, 0));  // the last slot does not reach the stream bits
    const std::string msg = error_of([] { (void)thread_key(0, 0, kMaxThreadSlots); });
    expect_contains(msg, fmt::format("sanitizer: block part {} is beyond the {} block parts per kernel", kMaxThreadSlots,
                                     kMaxThreadSlots));
}

TEST(SimLimits, ATraceHasTracksForALimitedNumberOfCores) {
    const std::string path = (std::filesystem::temp_directory_path() / fmt::format("tandem_limits_{}.json", ::getpid())).string();
    InstrRecord r;
    r.end = 1000;
    r.op = Opcode::BLOCK;
    r.core = 7000;  // AIC tracks would run into the AIV ones
    const std::vector<InstrRecord> log{r};
    TraceInput in;
    in.log = &log;
    in.stream_names = {"s"};
    const std::string msg = error_of([&] { write_chrome_trace(path, in); });
    expect_contains(msg, "trace: AIC core 7000 is outside the 6250 cores per type a trace has tracks for");
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SimLimits, TraceFilterErrorsNameTheQuantityNotAFlag) {
    const std::string ranks = error_of([] { parse_rank_list("0,x"); });
    expect_contains(ranks, "ranks '0,x': expected a comma-separated list of ranks like 0,3");
    const std::string window = error_of([] { parse_window_us("5:1"); });
    expect_contains(window, "window '5:1': expected START:END in microseconds");
    for (const std::string& m : {ranks, window}) EXPECT_EQ(m.find("--"), std::string::npos) << m;
}

}  // namespace sim_limits_test
}  // namespace tandem
