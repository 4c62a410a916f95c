// One results type behind every surface: the command line's results JSON (host::to_json of
// run_program's results) and the API's OpResults (result_fields, which the Python module's dict
// is) hold the same figures under the same keys for the same simulation, and every figure the
// JSON derives from the views is in OpResults. (tests/python/module/test_results_surfaces.py holds the
// Python dict to the command line's JSON the same way.)
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/run/results.hpp"
#include "sim/profile.hpp"
#include "tandem/tandem.hpp"

namespace results_surfaces_test {

using tandem::api::Context;
using tandem::api::ContextOptions;
using tandem::api::DataType;
using tandem::api::OpConfig;
using tandem::api::Tensor;

// The API's keys the command line has no figure for (a call's own clock and completion; the
// knobs, which the JSON has one by one).
const std::set<std::string> kCallOnlyKeys = {"complete", "per_rank_us", "start_us", "end_us", "knobs",
                                             "verification_report"};

struct Shape {
    std::string op;
    int m, k, n;  // the command line's M, K, N (K per rank for the reducing ops)
    int a_rows, a_cols, out_rows, out_cols;  // per rank, as the op shards them on 2 ranks
};

void expect_same_figures(const Shape& s) {
    SCOPED_TRACE(s.op);
    ContextOptions o;
    o.ranks = 2;
    o.functional = false;
    Context ctx(o);
    Tensor a = ctx.zeros(s.a_rows, s.a_cols, DataType::F16);
    Tensor b = ctx.zeros(s.k, s.n, DataType::F16);
    Tensor c = ctx.zeros(s.out_rows, s.out_cols, DataType::F32);
    OpConfig cfg;
    cfg.all_views = true;
    const tandem::api::Workspace ws = ctx.ops().run(s.op, c, a, b, nullptr, false, cfg);
    const tandem::api::OpResults& api = ws.results();

    tandem::host::RunRequest rc;
    rc.op = s.op;
    rc.ranks = 2;
    rc.m = s.m;
    rc.k = s.k;
    rc.n = s.n;
    rc.timing_only = true;
    const tandem::Profile profile = tandem::load_profile_by_soc(rc.soc, tandem::default_profile_dir());
    const nlohmann::json cli =
        tandem::host::to_json(tandem::host::run_program(tandem::host::resolve_run(rc, profile), profile).results);

    std::set<std::string> seen;
    for (const auto& [key, value] : tandem::api::result_fields(api)) {
        seen.insert(key);
        if (key == "knobs") {
            for (const auto& [knob, v] : std::get<std::map<std::string, int>>(value)) {
                ASSERT_TRUE(cli.contains(knob)) << knob;
                EXPECT_EQ(cli[knob].get<int>(), v) << knob;
            }
            continue;
        }
        if (kCallOnlyKeys.count(key) > 0) continue;
        ASSERT_TRUE(cli.contains(key)) << key << ": in OpResults, not in the command line's JSON";
        if (const double* d = std::get_if<double>(&value)) EXPECT_EQ(cli[key].get<double>(), *d) << key;
        else if (const int* i = std::get_if<int>(&value)) EXPECT_EQ(cli[key].get<int>(), *i) << key;
        else if (const std::string* t = std::get_if<std::string>(&value)) EXPECT_EQ(cli[key].get<std::string>(), *t) << key;
        else ADD_FAILURE() << key << ": a value of a type the JSON does not hold";
    }
    // Every figure the JSON derives from the views, but the aliases (the seed's allgather_* for
    // the neutral comm_payload_*, tflops_pipelined for tflops_per_rank) and the op's comm_kind.
    for (const std::string& key : tandem::host::result_figure_keys()) {
        if (key.rfind("allgather_", 0) == 0 || key == "tflops_pipelined" || key == "comm_kind") continue;
        EXPECT_TRUE(seen.count(key) > 0) << key << ": in the command line's JSON, not in OpResults";
    }
}

TEST(ResultsSurfaces, CommandLineJsonAndOpResultsAgree) {
    expect_same_figures(Shape{"allgather_gemm", 512, 512, 256, 256, 512, 512, 256});
    expect_same_figures(Shape{"matmul_all_reduce", 256, 512, 256, 256, 512, 256, 256});
}

}  // namespace results_surfaces_test
