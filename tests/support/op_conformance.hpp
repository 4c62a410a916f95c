#pragma once
// What every op and variant must do, checked from its description alone (kernels/op_desc.hpp),
// so that an op is covered by writing its OpDesc and nothing else:
//   * the description has what the host and these checks need (a test shape, faults, ...);
//   * on its small test shape it verifies, with --sanitize finding nothing, on every rank count
//     (2, 4, 8; 1 too for an op without communication), with every input and output dtype it
//     declares and every bias kind it takes (with the dtypes that take one), and the views keep
//     their invariants;
//   * timing-only gives the functional run's times;
//   * every schedule and comm mode it offers beyond the first verifies and runs clean;
//   * each fault it lists is caught: verification fails, or --sanitize reports the race (a
//     fault that acts only under a stream-K schedule is tried under the schedules offered).
// tests/kernels/op_conformance_test.cpp runs these for every registered op; tests/kernels/toy_op_test.cpp for
// an op written in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/op_desc.hpp"
#include "sim/sanitize/sanitizer.hpp"
#include "tests/support/op_run.hpp"

namespace tandem::test {

// A run of `v` on `shape`, its op carried by the config (so an op outside the registry runs too).
inline host::RunRequest conformance_config(const kernels::OpDesc& op, const kernels::VariantDesc& v,
                                          const kernels::RunShape& shape) {
    host::RunRequest c;
    c.op = op.name;
    c.op_desc = &op;
    c.variant = v.name;
    c.ranks = shape.ranks;
    c.m = shape.m;
    c.k = shape.k;
    c.n = shape.n;
    c.base_m = shape.base_m;
    c.base_n = shape.base_n;
    c.compute_blocks = shape.compute_blocks;
    c.comm_blocks = shape.comm_blocks;
    return c;
}

inline std::string describe(const host::RunRequest& c) {
    return fmt::format("{} / {} on {} ranks, M={} K={} N={} tile {}x{}, {} -> {}, bias {}, schedule {}, comm mode {}{}{}",
                       c.op, c.variant, c.ranks, c.m, c.k, c.n, c.base_m, c.base_n, dtype_name(c.dtype),
                       c.out_dtype ? dtype_name(*c.out_dtype) : "(default)", kernels::bias_name(c.bias),
                       c.schedule.empty() ? "(default)" : c.schedule, c.comm_mode.empty() ? "(default)" : c.comm_mode,
                       c.fault.empty() ? "" : ", fault ", c.fault);
}

// run_op, a refusal naming the run.
inline host::ProgramOutput run_validated(const host::RunRequest& c, const Profile& p) {
    const std::string why = refusal_of(c, p);
    if (!why.empty()) throw SimError(fmt::format("{}: refused: {}", describe(c), why));
    return run_op(c, p);
}

// The cube's (pipe M's) busy time of each rank over the pipelined view of a timing-only
// matmul_all_reduce atomic, 2 ranks x 512x1024x512, with `dtype` inputs: what the dtype suites
// compare against fp16's.
inline std::vector<SimTime> cube_busy_ps_per_rank(DType dtype, const Profile& p) {
    host::RunRequest r;
    r.op = "matmul_all_reduce";
    r.variant = "atomic";
    r.ranks = 2;
    r.m = 512;
    r.k = 1024;
    r.n = 512;
    r.timing_only = true;
    r.dtype = dtype;
    const host::ProgramOutput out = run_validated(r, p);
    std::vector<SimTime> busy;
    for (int rank = 0; rank < r.ranks; ++rank)
        busy.push_back(out.bench.pipelined_busy_ps.at(rank)[static_cast<std::size_t>(Pipe::M)]);
    return busy;
}

// What an op needs for these checks, as one message per gap (empty: nothing missing).
inline std::vector<std::string> description_gaps(const kernels::OpDesc& op, const kernels::VariantDesc& v) {
    std::vector<std::string> gaps;
    const std::string where = fmt::format("op {} variant {}", op.name, v.name);
    if (!op.test_shape_of(v))
        gaps.push_back(where + ": no test shape (OpDesc::test_shape, or VariantDesc::test_shape): a small shape every "
                               "variant accepts on 2, 4 and 8 ranks, for tests/kernels/op_conformance_test.cpp");
    if (v.faults.empty())
        gaps.push_back(where + ": no fault (VariantDesc::faults): at least one deliberate bug the tests can ask for, "
                               "to prove that verification catches a wrong kernel");
    if (!v.make) gaps.push_back(where + ": no make (VariantDesc::make)");
    if (!v.validate) gaps.push_back(where + ": no validate (VariantDesc::validate)");
    if (!v.workspace_bytes) gaps.push_back(where + ": no workspace_bytes (VariantDesc::workspace_bytes)");
    if (v.schedules.empty() || v.dtypes.empty() || v.out_dtypes.empty() || v.comm_modes.empty())
        gaps.push_back(where + ": an empty schedules, dtypes, out_dtypes or comm_modes list (the first is the default)");
    if (!op.comm_payload_bytes) gaps.push_back("op " + op.name + ": no comm_payload_bytes (OpDesc::comm_payload_bytes)");
    for (std::size_t i = 0; i < v.faults.size(); ++i)
        if (std::count(v.faults.begin(), v.faults.end(), v.faults[i]) > 1)
            gaps.push_back(where + ": fault " + v.faults[i] + " listed twice");
    return gaps;
}

// The rank counts an op is checked on.
inline std::vector<int> conformance_ranks(const kernels::OpDesc& op) {
    std::vector<int> ranks;
    if (op.min_ranks <= 1) ranks.push_back(1);
    for (int r : {2, 4, 8}) ranks.push_back(r);
    return ranks;
}

// The runs that cover what the variant declares: every rank count, every (input, output) dtype
// pair its validation accepts (each declared dtype must be in one), every bias kind it takes;
// run i takes entry i of each list, cycling the shorter lists.
inline std::vector<host::RunRequest> declared_configs(const kernels::OpDesc& op, const kernels::VariantDesc& v,
                                                     const Profile& p) {
    std::vector<std::pair<DType, DType>> pairs;
    for (DType in : v.dtypes) {
        for (DType out : v.out_dtypes) {
            host::RunRequest c = conformance_config(op, v, op.test_shape_of(v)(2));
            c.dtype = in;
            c.out_dtype = out;
            if (refusal_of(c, p).empty()) pairs.emplace_back(in, out);
        }
    }
    for (DType in : v.dtypes)
        EXPECT_TRUE(std::any_of(pairs.begin(), pairs.end(), [in](const auto& q) { return q.first == in; }))
            << op.name << " / " << v.name << " declares input dtype " << dtype_name(in) << " but refuses every output with it";
    for (DType out : v.out_dtypes)
        EXPECT_TRUE(std::any_of(pairs.begin(), pairs.end(), [out](const auto& q) { return q.second == out; }))
            << op.name << " / " << v.name << " declares output dtype " << dtype_name(out) << " but refuses every input with it";
    using kernels::BiasKind;
    const std::vector<BiasKind> biases =
        v.takes_bias ? std::vector<BiasKind>{BiasKind::None, BiasKind::N, BiasKind::M} : std::vector<BiasKind>{BiasKind::None};
    const std::vector<int> ranks = conformance_ranks(op);
    const std::size_t runs = std::max({ranks.size(), pairs.size(), biases.size()});
    std::vector<host::RunRequest> out;
    for (std::size_t i = 0; i < runs && !pairs.empty(); ++i) {
        host::RunRequest c = conformance_config(op, v, op.test_shape_of(v)(ranks[i % ranks.size()]));
        c.dtype = pairs[i % pairs.size()].first;
        c.out_dtype = pairs[i % pairs.size()].second;
        c.bias = biases[i % biases.size()];
        // A dtype that takes no bias (int8: check_int8_rules) runs without; any other refusal
        // stays and fails the run.
        if (c.bias != BiasKind::None && !refusal_of(c, p).empty()) {
            host::RunRequest plain = c;
            plain.bias = BiasKind::None;
            if (refusal_of(plain, p).empty()) c = plain;
        }
        out.push_back(c);
    }
    return out;
}

inline void expect_view_invariants(const kernels::OpDesc& op, const host::ProgramOutput& out) {
    expect_view_invariants(out);
    const host::ViewTimes& t = out.results.times;
    if (op.communicates()) EXPECT_GT(t.seq_comm_us, 0.0);
    else EXPECT_EQ(t.seq_comm_us, 0.0);
}

// Verifies with the sanitizer on and nothing reported; returns the run.
inline host::ProgramOutput expect_verifies_clean(const kernels::OpDesc& op, host::RunRequest c, const Profile& p) {
    SCOPED_TRACE(describe(c));
    c.sanitize = true;
    host::ProgramOutput out = run_validated(c, p);
    EXPECT_EQ(out.results.verification, host::Verification::Passed) << out.failure_report;
    EXPECT_EQ(out.bench.sanitizer_total, 0u)
        << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
    expect_view_invariants(op, out);
    return out;
}

inline void check_description(const kernels::OpDesc& op, const kernels::VariantDesc& v) {
    for (const std::string& gap : description_gaps(op, v)) ADD_FAILURE() << gap;
}

// Verification, the sanitizer and the view invariants on every declared dtype, bias and rank count.
inline void check_declared_runs(const kernels::OpDesc& op, const kernels::VariantDesc& v, const Profile& p) {
    ASSERT_TRUE(description_gaps(op, v).empty()) << description_gaps(op, v).front();
    for (const host::RunRequest& c : declared_configs(op, v, p)) expect_verifies_clean(op, c, p);
}

// Timing-only gives the functional times (the functional run sanitized: the sanitizer changes no
// simulated time either).
inline void check_timing_only(const kernels::OpDesc& op, const kernels::VariantDesc& v, const Profile& p) {
    ASSERT_TRUE(description_gaps(op, v).empty()) << description_gaps(op, v).front();
    const host::RunRequest c = conformance_config(op, v, op.test_shape_of(v)(2));
    const host::ProgramOutput functional = expect_verifies_clean(op, c, p);
    host::RunRequest t = c;
    t.timing_only = true;
    const host::ProgramOutput timing = run_validated(t, p);
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(timing.results.verification, host::Verification::Skipped);
    EXPECT_EQ(functional.results.times.compute_only_us, timing.results.times.compute_only_us);
    EXPECT_EQ(functional.results.times.seq_comm_us, timing.results.times.seq_comm_us);
    EXPECT_EQ(functional.results.times.seq_compute_us, timing.results.times.seq_compute_us);
    EXPECT_EQ(functional.results.times.pipelined_us, timing.results.times.pipelined_us);
}

// Every schedule and comm mode beyond the first verifies and runs clean.
inline void check_offered_schedules_and_modes(const kernels::OpDesc& op, const kernels::VariantDesc& v, const Profile& p) {
    ASSERT_TRUE(description_gaps(op, v).empty()) << description_gaps(op, v).front();
    const host::RunRequest base = conformance_config(op, v, op.test_shape_of(v)(2));
    for (std::size_t i = 1; i < v.schedules.size(); ++i) {
        host::RunRequest c = base;
        c.schedule = v.schedules[i];
        expect_verifies_clean(op, c, p);
    }
    for (std::size_t i = 1; i < v.comm_modes.size(); ++i) {
        host::RunRequest c = base;
        c.comm_mode = v.comm_modes[i];
        expect_verifies_clean(op, c, p);
    }
}

// Whether the fault is caught on `c`: verification fails, or (when the timing hides a race) the
// sanitizer reports it.
inline bool fault_caught(host::RunRequest c, const Profile& p) {
    if (run_validated(c, p).results.verification == host::Verification::Failed) return true;
    c.sanitize = true;
    return run_validated(c, p).bench.sanitizer_total > 0;
}

// Each listed fault is caught under the variant's default schedule or, for a fault that acts
// only there, under another schedule it offers.
inline void check_faults(const kernels::OpDesc& op, const kernels::VariantDesc& v, const Profile& p) {
    ASSERT_TRUE(description_gaps(op, v).empty()) << description_gaps(op, v).front();
    for (const std::string& fault : v.faults) {
        host::RunRequest c = conformance_config(op, v, op.test_shape_of(v)(2));
        c.fault = fault;
        bool caught = false;
        for (const std::string& schedule : v.schedules) {
            c.schedule = schedule;
            if ((caught = fault_caught(c, p))) break;
        }
        EXPECT_TRUE(caught) << op.name << " / " << v.name << ": fault " << fault
                            << " passes verification and the sanitizer under every schedule it offers";
    }
}

}  // namespace tandem::test
