#pragma once
// Simulated time. One unit is one picosecond, stored as a signed 64-bit integer so that
// arithmetic is exact and identical on every host (no floating-point drift between runs).
#include <cmath>
#include <cstdint>
#include <limits>

namespace tandem {

using SimTime = std::int64_t;  // picoseconds of simulated time

inline constexpr SimTime kPsPerNs = 1000;
inline constexpr SimTime kPsPerUs = 1000 * 1000;
inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max() / 4;

// std::llround of a non-negative finite value, without the library call (the simulator rounds
// every cost through it, millions of times a run). Exact: the fraction x - trunc(x) of a double
// is itself exact, so the result is llround's, half away from zero; negative values go to llround.
inline std::int64_t round_half_up_nonneg(double x) {
    if (!(x >= 0.0) || x >= 9.2e18) return std::llround(x);
    const auto whole = static_cast<std::int64_t>(x);
    return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

inline double to_us(SimTime t_ps) { return static_cast<double>(t_ps) / static_cast<double>(kPsPerUs); }
inline double to_ns(SimTime t_ps) { return static_cast<double>(t_ps) / static_cast<double>(kPsPerNs); }
inline SimTime from_ns(double ns) { return static_cast<SimTime>(std::llround(ns * 1000.0)); }
inline SimTime from_us(double us) { return static_cast<SimTime>(std::llround(us * 1.0e6)); }

// Duration of `cycles` cycles of a clock running at `clock_mhz`, rounded once for the whole
// count (rounding per cycle would bias long runs).
inline SimTime cycles_to_ps(double cycles, double clock_mhz) {
    return static_cast<SimTime>(round_half_up_nonneg(cycles * 1.0e6 / clock_mhz));
}

// Time to move `bytes` at `gib_per_s` (binary GiB per second).
inline SimTime bytes_at_gib_s(double bytes, double gib_per_s) {
    return static_cast<SimTime>(round_half_up_nonneg(bytes * 1.0e12 / (gib_per_s * 1073741824.0)));
}

}  // namespace tandem
