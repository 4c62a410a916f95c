// Every registered op and variant runs clean under --sanitize on 2, 4 and 8 ranks (whatever the
// registry holds when the suite is built), verifies, and keeps its times: the sanitizer only
// observes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "kernels/registry.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

// The first small shape the variant accepts on `ranks` ranks (nullopt: none of them).
std::optional<RunConfig> small_config(const std::string& op, const std::string& variant, int ranks, const Profile& p) {
    // (The last: gemm pto_performance's smallest grid multiple, M % 512, N % 1536, K % 256.)
    const int shapes[][3] = {{256, 512, 512}, {512, 256, 256}, {1024, 512, 512}, {2048, 512, 1024}, {256, 512, 2048}, {1024, 512, 2048}, {2048, 512, 2048}, {256, 2048, 512}, {512, 256, 1536}};
    for (const auto& s : shapes) {
        RunConfig c;
        c.op = op;
        c.variant = variant;
        c.ranks = ranks;
        c.m = s[0] * ranks / 2;
        c.k = s[1];
        c.n = s[2];
        c.quiet = true;
        try {
            apply_profile_defaults(c, p);
            validate_run_config(c, buffer_limits_of(p));
            return c;
        } catch (const SimError&) {
        }
    }
    return std::nullopt;
}

TEST(SanitizerOps, EveryOpAndVariantRunsCleanOn2_4_8Ranks) {
    const Profile p = test::b1_profile();
    int runs = 0;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        for (const kernels::VariantDesc& v : op->variants) {
            for (const int ranks : {2, 4, 8}) {
                std::optional<RunConfig> cfg = small_config(op->name, v.name, ranks, p);
                if (!cfg) {
                    ADD_FAILURE() << op->name << "/" << v.name << " on " << ranks << " ranks: no small shape accepted";
                    continue;
                }
                SCOPED_TRACE(fmt::format("{} / {} on {} ranks, M={} K={} N={}", op->name, v.name, ranks, cfg->m, cfg->k, cfg->n));
                cfg->sanitize = true;
                ProgramOutput out;
                try {
                    out = run_program(*cfg, p);
                } catch (const SimError& e) {
                    ADD_FAILURE() << e.what();
                    continue;
                }
                ++runs;
                EXPECT_EQ(out.bench.sanitizer_total, 0u)
                    << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
                EXPECT_EQ(out.results.verification, Verification::Passed);
                if (ranks == 2) {  // the sanitizer changes no simulated time
                    cfg->sanitize = false;
                    const ProgramOutput plain = run_program(*cfg, p);
                    EXPECT_EQ(plain.results.times.pipelined_us, out.results.times.pipelined_us);
                    EXPECT_EQ(plain.results.times.compute_only_us, out.results.times.compute_only_us);
                    EXPECT_EQ(plain.results.times.seq_comm_us, out.results.times.seq_comm_us);
                }
            }
        }
    }
    EXPECT_GT(runs, 0);
}

// Every schedule beyond data_parallel a variant offers (stream_k, hybrid: MIX kernels whose AIVs
// wait on other blocks' partials) runs clean and verifies, with tiles split over blocks.
TEST(SanitizerOps, EveryOfferedGemmScheduleRunsClean) {
    const Profile p = test::b1_profile();
    int runs = 0;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        for (const kernels::VariantDesc& v : op->variants) {
            for (const std::string& schedule : v.schedules) {
                if (schedule == "data_parallel") continue;
                std::optional<RunConfig> cfg = small_config(op->name, v.name, 2, p);
                ASSERT_TRUE(cfg.has_value()) << op->name << "/" << v.name;
                cfg->schedule = schedule;
                cfg->m = 640;  // 5 x 2 tiles of 128 x 256: not a multiple of the 24 blocks
                validate_run_config(*cfg, buffer_limits_of(p));
                SCOPED_TRACE(fmt::format("{} / {} schedule {}", op->name, v.name, schedule));
                cfg->sanitize = true;
                const ProgramOutput out = run_program(*cfg, p);
                ++runs;
                EXPECT_EQ(out.bench.sanitizer_total, 0u)
                    << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
                EXPECT_EQ(out.results.verification, Verification::Passed);
            }
        }
    }
    EXPECT_GT(runs, 0);
}

}  // namespace
}  // namespace tandem::host
