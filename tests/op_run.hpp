#pragma once
// Running an op as the command line does (profile defaults, validation, the program), for the
// tests of the ops: one copy of what each op's test used to write for itself.
#include <gtest/gtest.h>

#include <string>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {

// A shipped profile by its SoC name (sim/profiles/<soc>.toml).
inline Profile profile_named(const std::string& soc) {
    return load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/" + soc + ".toml");
}

// The run's refusal (the SimError's message), empty when the config is accepted.
inline std::string refusal_of(host::RunConfig cfg, const Profile& p = b1_profile()) {
    try {
        host::apply_profile_defaults(cfg, p);
        host::validate_run_config(cfg, host::buffer_limits_of(p));
    } catch (const SimError& e) {
        return e.what();
    }
    return {};
}

// The profile's defaults applied, the config validated (a refusal throws SimError), the program
// run.
inline host::ProgramOutput run_op(host::RunConfig cfg, const Profile& p = b1_profile()) {
    host::apply_profile_defaults(cfg, p);
    host::validate_run_config(cfg, host::buffer_limits_of(p));
    return host::run_program(cfg, p);
}

// What every view plan keeps: the GEMM alone is no slower than the fused op, and the sequential
// time is its two parts.
inline void expect_view_invariants(const host::ProgramOutput& out) {
    const host::ViewTimes& t = out.results.times;
    const host::RunMetrics m = host::compute_metrics(out.results.id, t);
    EXPECT_GT(t.compute_only_us, 0.0);
    EXPECT_LE(t.compute_only_us, t.pipelined_us);
    EXPECT_DOUBLE_EQ(m.sequential_us, t.seq_comm_us + t.seq_compute_us);
}

}  // namespace tandem::test
