#pragma once
// Running an op as the command line does (the ops facade resolves and checks the request, then
// the program runs), for the tests of the ops: one copy of what each op's test used to write
// for itself.
#include <gtest/gtest.h>

#include <string>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::test {

// A shipped profile by its SoC name (sim/profiles/<soc>.toml).
inline Profile profile_named(const std::string& soc) {
    return load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/" + soc + ".toml");
}

// The run's refusal as the command line says it (the ops facade's ParamError in the CLI's
// words: "--gk 1000: ..."), empty when the request is accepted.
inline std::string refusal_of(const host::RunRequest& r, const Profile& p = b1_profile()) {
    try {
        host::resolve_run(r, p);
    } catch (const SimError& e) {
        return host::cli_message(e);
    }
    return {};
}

// The request resolved by the ops facade (a refusal throws its ParamError), the program run.
inline host::ProgramOutput run_op(const host::RunRequest& r, const Profile& p = b1_profile(),
                                  const host::RunOutputs& outputs = {}) {
    return host::run_program(host::resolve_run(r, p), p, outputs);
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
