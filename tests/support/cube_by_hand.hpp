#pragma once
// The cube's cost as the profile states it (sim/MODEL.md "Costs"), written out by hand for the
// cube tests to compare the simulator's TMATMUL times with.
#include <cmath>

#include "sim/profile.hpp"
#include "sim/sim_time.hpp"

namespace tandem::test {

inline SimTime core_cycles(const Profile& p, double n) { return cycles_to_ps(n, p.chip.core_clock_mhz); }

// cube_fixed_cycles + ceil(m/16) ceil(k/16) ceil(n/16) x factor / cube_efficiency, in ps.
inline SimTime cube_by_hand(const Profile& prof, int m, int k, int n, double factor) {
    const auto& p = prof.pipes;
    const int f = p.cube_fractal;
    const double fractals = std::ceil(double(m) / f) * std::ceil(double(k) / f) * std::ceil(double(n) / f);
    return core_cycles(prof, p.cube_fixed_cycles + fractals * factor / p.cube_efficiency);
}

}  // namespace tandem::test
