// The calibrated profile against the measured rows, and the physics of its fitted parameters:
// each one, moved by 10%, must move the predictions the way the hardware would.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "host/op_bench.hpp"
#include "host/options.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

struct Row {
    int ranks, m, k, n;
    double measured_us;
};

std::vector<Row> calibration_rows() {
    std::ifstream f(std::string(TANDEM_SOURCE_DIR) + "/sim/calibration/allgather_gemm_Ascend910B1.csv");
    std::vector<Row> rows;
    std::string line;
    bool header = true;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (header) {
            header = false;
            continue;
        }
        std::stringstream ss(line);
        std::string soc, ranks, m, k, n, ms;
        std::getline(ss, soc, ',');
        std::getline(ss, ranks, ',');
        std::getline(ss, m, ',');
        std::getline(ss, k, ',');
        std::getline(ss, n, ',');
        std::getline(ss, ms, ',');
        rows.push_back(Row{std::stoi(ranks), std::stoi(m), std::stoi(k), std::stoi(n), std::stod(ms) * 1000.0});
    }
    return rows;
}

// Mean over ranks of the pipelined time, per row (the figure compared with the measurement).
std::vector<double> predict(const Profile& p, const std::vector<Row>& rows) {
    std::vector<double> out;
    for (const Row& r : rows) {
        RunConfig cfg;
        cfg.ranks = r.ranks;
        cfg.m = r.m;
        cfg.k = r.k;
        cfg.n = r.n;
        cfg.timing_only = true;
        apply_profile_defaults(cfg, p);
        const BenchOutcome o = run_views(p, cfg, nullptr);
        double sum = 0;
        for (const RankViewTimes& t : o.per_rank) sum += t.pipelined_us;
        out.push_back(sum / static_cast<double>(o.per_rank.size()));
    }
    return out;
}

class Calibration : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        rows_ = calibration_rows();
        base_ = predict(test::b1_profile(), rows_);
    }
    static std::vector<Row> rows_;
    static std::vector<double> base_;
};
std::vector<Row> Calibration::rows_;
std::vector<double> Calibration::base_;

TEST_F(Calibration, EveryMeasuredRowWithinTenPercent) {
    ASSERT_EQ(rows_.size(), 5U);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const double err = (base_[i] - rows_[i].measured_us) / rows_[i].measured_us;
        EXPECT_LT(std::abs(err), 0.10) << "row " << i << ": simulated " << base_[i] << " us, measured "
                                       << rows_[i].measured_us << " us";
    }
}

// Every row moves in `direction` (+1 slower, -1 faster) or stays; rows in `must_move` move.
void expect_moves(const std::vector<double>& base, const std::vector<double>& changed, int direction,
                  const std::vector<std::size_t>& must_move, const char* what) {
    for (std::size_t i = 0; i < base.size(); ++i) {
        if (direction > 0) EXPECT_GE(changed[i], base[i] - 1e-6) << what << ", row " << i;
        else EXPECT_LE(changed[i], base[i] + 1e-6) << what << ", row " << i;
    }
    for (std::size_t i : must_move) EXPECT_NE(changed[i], base[i]) << what << " should move row " << i;
}

const std::vector<std::size_t> kTwoRankRows = {0, 1, 2, 3};  // bound by the link
const std::vector<std::size_t> kAllRows = {0, 1, 2, 3, 4};

TEST_F(Calibration, SlowerLinksSlowTheCommBoundRows) {
    Profile p = test::b1_profile();
    p.interconnect.link_gb_s *= 0.9;
    expect_moves(base_, predict(p, rows_), +1, kTwoRankRows, "link -10%");
    p = test::b1_profile();
    p.interconnect.link_gb_s *= 1.1;
    expect_moves(base_, predict(p, rows_), -1, kTwoRankRows, "link +10%");
}

TEST_F(Calibration, SlowerGmToL1MakesTheKLoopLoadBound) {
    Profile p = test::b1_profile();
    p.pipes.gm_to_l1_gib_s *= 0.9;  // below the cube-bound threshold: every GEMM slows down
    expect_moves(base_, predict(p, rows_), +1, kAllRows, "GM->L1 -10%");
    // Already cube-bound: faster loads change nothing that matters. (Under 1%: the order in
    // which cores get the shared fabric shifts a little, and with it the chunk arrival order.)
    p = test::b1_profile();
    p.pipes.gm_to_l1_gib_s *= 1.1;
    const std::vector<double> faster = predict(p, rows_);
    for (std::size_t i = 0; i < base_.size(); ++i) EXPECT_NEAR(faster[i], base_[i], 0.01 * base_[i]) << "row " << i;
}

TEST_F(Calibration, SlowerCubeSlowsTheComputeBoundRow) {
    Profile p = test::b1_profile();
    p.pipes.cube_efficiency *= 0.9;
    expect_moves(base_, predict(p, rows_), +1, {4}, "cube efficiency -10%");
}

TEST_F(Calibration, LongerLaunchSlowsEveryRow) {
    Profile p = test::b1_profile();
    p.host.launch_to_start_us *= 1.1;
    expect_moves(base_, predict(p, rows_), +1, kAllRows, "launch +10%");
}

}  // namespace
}  // namespace tandem::host
