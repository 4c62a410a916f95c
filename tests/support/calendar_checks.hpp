#pragma once
// What the bandwidth calendars' tests share (tests/sim/net_test.cpp, the exact calendar;
// tests/sim/binned_calendar_test.cpp, the binned one): a random transfer for their capacity tests,
// and the check of an error's message.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>

#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem::test {

// Up to 4000 bytes at a cap of 1..60 GB/s over one of three paths (0: resource a, 1: resource b,
// 2: b then a).
struct RandomTransfer {
    double bytes;
    std::int64_t cap_bytes_per_s;
    unsigned path;
    // No transfer ends sooner than this after its start: its bytes at its own cap.
    SimTime min_duration_ps() const { return static_cast<SimTime>(bytes * 1e12 / static_cast<double>(cap_bytes_per_s)); }
};

inline RandomTransfer random_transfer(std::mt19937& random) {
    RandomTransfer t{};
    t.bytes = static_cast<double>(random() % 4000);
    t.cap_bytes_per_s = static_cast<std::int64_t>(1 + random() % 60) * 1000 * 1000 * 1000;
    t.path = random() % 3;
    return t;
}

// Runs `action`, expecting a SimError whose message contains every one of `parts`.
template <typename Action>
void expect_sim_error(Action action, std::initializer_list<std::string> parts) {
    try {
        action();
        ADD_FAILURE() << "expected SimError";
    } catch (const SimError& error) {
        const std::string message = error.what();
        for (const std::string& part : parts) {
            EXPECT_NE(message.find(part), std::string::npos) << "message '" << message << "' lacks '" << part << "'";
        }
    }
}

}  // namespace tandem::test
