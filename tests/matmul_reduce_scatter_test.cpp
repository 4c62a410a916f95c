// matmul_reduce_scatter end to end: every variant verifies on 2, 4 and 8 ranks, with and without
// a bias (m, n), fp16 and bf16 in, fp32 and input-dtype out, on shapes whose M and K do not divide
// into tiles (padded); N not splitting into whole-tile column blocks is refused with the rule;
// each variant's fault fails verification; the view invariants hold; functional and timing-only
// runs give the same times; the baseline reduce-scatter follows the topology (ring profile).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_reduce_scatter/mrs_run.hpp"
#include "kernels/matmul_reduce_scatter/op.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "tests/test_support.hpp"

namespace tandem::host {
namespace {

const std::vector<std::string>& variants() {
    static const std::vector<std::string> v = {"tile_owner", "atomic"};
    return v;
}

struct Case {
    int ranks, m, k, n;
    std::string dtype = "fp16";
    std::string out_dtype = "fp32";
    std::string bias = "none";
    int base_n = 128;  // small column blocks: N = ranks x 128 is a valid N
};

RunConfig config(const std::string& variant, const Case& c, bool timing_only = false) {
    RunConfig cfg;
    cfg.op = "matmul_reduce_scatter";
    cfg.variant = variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.base_n = c.base_n;
    cfg.dtype = c.dtype;
    cfg.out_dtype = c.out_dtype;
    cfg.bias = c.bias;
    cfg.timing_only = timing_only;
    cfg.quiet = true;
    return cfg;
}

ProgramOutput run(RunConfig cfg, const std::string& fault = "", const std::string& soc = "") {
    cfg.fault = fault;
    const Profile p = soc.empty() ? test::b1_profile()
                                  : load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/" + soc + ".toml");
    apply_profile_defaults(cfg, p);
    validate_run_config(cfg, buffer_limits_of(p));
    return run_program(cfg, p);
}

std::string describe(const std::string& v, const Case& c) {
    return v + " n=" + std::to_string(c.ranks) + " " + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
           std::to_string(c.n) + " " + c.dtype + "->" + c.out_dtype + " bias " + c.bias;
}

void expect_verifies(const std::string& v, const Case& c) {
    SCOPED_TRACE(describe(v, c));
    const ProgramOutput out = run(config(v, c));
    EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
    const ViewTimes& t = out.results.times;
    EXPECT_LE(t.compute_only_us, t.pipelined_us);
    EXPECT_GT(t.seq_comm_us, 0.0);
}

TEST(MatmulReduceScatter, IsRegisteredWithItsVariants) {
    const kernels::OpDesc& op = kernels::find_op("matmul_reduce_scatter");
    EXPECT_EQ(op.title, "GEMM ReduceScatter");
    EXPECT_EQ(op.variants.front().name, "tile_owner");
    for (const std::string& v : variants()) EXPECT_NE(op.find_variant(v), nullptr) << v;
    EXPECT_EQ(op.sharding.out, kernels::Split::Cols);
    EXPECT_TRUE(op.sharding.k_per_rank);
    kernels::OpParams p;
    p.ranks = 4;
    p.m = 128;
    p.n = 1024;
    p.out_dtype = DType::F16;
    EXPECT_DOUBLE_EQ(op.comm_payload_bytes(p), 3.0 / 4 * 128 * 1024 * 2);
}

TEST(MatmulReduceScatter, ReadyFlagsAreOnePerSourceAndOwnedTile) {
    // tile_owner's ready[src][i] on each owner: indexed by the owner's own tiles, so a rank holds
    // W x tiles/W flag words (not W x tiles: at 64 ranks x 4096 x 16384 the unused words the
    // host reset each call made the simulator keep 8.4 M signal words, a 1.6 GiB peak).
    kernels::mrs::TileMap map;
    map.ranks = 4;
    map.m_pad = 384;
    map.base_m = 128;
    map.base_n = 128;
    map.n_tiles = 8;       // N = 1024
    map.owner_tiles = 2;   // N / W / base_n
    map.tiles = 3 * 8;
    EXPECT_EQ(map.owned_count() * map.ranks, map.tiles);
    kernels::mrs::MrsArgs a;
    a.map = map;
    a.flags_base = {1000, 2000, 3000, 4000};
    EXPECT_EQ(a.ready_words(), map.tiles);
    for (int owner = 0; owner < map.ranks; ++owner) {
        std::vector<int> seen(static_cast<std::size_t>(a.ready_words()), 0);
        const std::vector<int> owned = map.owned_tiles(owner);
        ASSERT_EQ(static_cast<int>(owned.size()), map.owned_count());
        for (int i = 0; i < map.owned_count(); ++i) {
            const int t = owned[static_cast<std::size_t>(i)];
            EXPECT_EQ(map.owner(t), owner);
            EXPECT_EQ(map.owned_index(t), i);  // the reduction's order is the flags' order
            for (int src = 0; src < map.ranks; ++src) {
                const SignalAddr f = a.ready(owner, src, t);
                EXPECT_EQ(f.rank, owner);
                const std::int64_t word = (f.address - a.flags_base[static_cast<std::size_t>(owner)]) / 4;
                ASSERT_GE(word, 0);
                ASSERT_LT(word, a.ready_words());
                ++seen[static_cast<std::size_t>(word)];
            }
        }
        for (int n : seen) EXPECT_EQ(n, 1) << "owner " << owner << ": a flag word shared or unused";
    }
}

TEST(MatmulReduceScatter, VerifiesOn2_4And8Ranks) {
    for (const std::string& v : variants()) {
        expect_verifies(v, Case{2, 256, 256, 512});
        expect_verifies(v, Case{4, 256, 256, 512});
        expect_verifies(v, Case{8, 128, 128, 1024});
        expect_verifies(v, Case{2, 256, 512, 1024, "fp16", "fp32", "none", 256});  // the default tile
    }
}

TEST(MatmulReduceScatter, BiasIsAddedOnce) {
    for (const std::string& v : variants()) {
        expect_verifies(v, Case{2, 256, 256, 512, "fp16", "fp32", "n"});
        expect_verifies(v, Case{4, 256, 256, 512, "fp16", "fp32", "m"});
    }
}

TEST(MatmulReduceScatter, Bf16AndLowPrecisionOutputs) {
    for (const std::string& v : variants()) {
        expect_verifies(v, Case{2, 256, 256, 512, "bf16", "fp32"});
        expect_verifies(v, Case{2, 256, 256, 512, "fp16", "fp16", "n"});
        expect_verifies(v, Case{4, 256, 256, 512, "bf16", "bf16", "m"});
    }
}

TEST(MatmulReduceScatter, MAndKThatDoNotDivideIntoTilesArePadded) {
    for (const std::string& v : variants()) {
        expect_verifies(v, Case{2, 200, 300, 256, "fp16", "fp32", "n"});
        expect_verifies(v, Case{4, 130, 100, 512, "bf16", "bf16", "m"});
    }
}

TEST(MatmulReduceScatter, NNotWholeTileColumnBlocksIsRefusedWithTheRule) {
    for (const std::string& v : variants()) {
        try {
            run(config(v, Case{4, 256, 256, 1000}));
            ADD_FAILURE() << v << ": N = 1000 on 4 ranks accepted";
        } catch (const SimError& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("--gn 1000"), std::string::npos) << msg;
            EXPECT_NE(msg.find("nearest valid: 1024"), std::string::npos) << msg;
        }
    }
}

TEST(MatmulReduceScatter, EachVariantsFaultFailsVerification) {
    const kernels::OpDesc& op = kernels::find_op("matmul_reduce_scatter");
    for (const std::string& v : variants()) {
        const kernels::VariantDesc* d = op.find_variant(v);
        ASSERT_NE(d, nullptr);
        ASSERT_FALSE(d->faults.empty()) << v;
        for (const std::string& fault : d->faults) {
            const ProgramOutput out = run(config(v, Case{4, 256, 256, 512}), fault);
            EXPECT_EQ(out.results.verification, Verification::Failed) << v << " " << fault;
        }
    }
}

TEST(MatmulReduceScatter, ViewInvariants) {
    for (const std::string& v : variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = run(config(v, Case{2, 1024, 1024, 1024, "fp16", "fp32", "none", 256}, true));
        const ViewTimes& t = out.results.times;
        const RunMetrics m = compute_metrics(out.results.id, t);
        EXPECT_LE(t.compute_only_us, t.pipelined_us);
        EXPECT_LE(t.pipelined_us, m.sequential_us);
        EXPECT_DOUBLE_EQ(m.sequential_us, t.seq_comm_us + t.seq_compute_us);
        const nlohmann::json j = to_json(out.results);
        for (const std::string& key : contract_keys()) EXPECT_TRUE(j.contains(key)) << key;
        EXPECT_EQ(j["comm_kind"], "reducescatter");
    }
}

TEST(MatmulReduceScatter, FunctionalAndTimingOnlyGiveTheSameTimes) {
    for (const std::string& v : variants()) {
        SCOPED_TRACE(v);
        const Case c{4, 256, 512, 512, "fp16", "fp32", "n"};
        const ProgramOutput f = run(config(v, c));
        const ProgramOutput t = run(config(v, c, true));
        EXPECT_EQ(f.results.times.compute_only_us, t.results.times.compute_only_us);
        EXPECT_EQ(f.results.times.seq_comm_us, t.results.times.seq_comm_us);
        EXPECT_EQ(f.results.times.seq_compute_us, t.results.times.seq_compute_us);
        EXPECT_EQ(f.results.times.pipelined_us, t.results.times.pipelined_us);
    }
}

// On an A3 profile (ring interconnect) the baseline reduce-scatter is the ring algorithm, and the
// variants still verify.
TEST(MatmulReduceScatter, RingTopologyProfile) {
    for (const std::string& v : variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = run(config(v, Case{4, 256, 256, 512}), "", "Ascend910_9372");
        EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
        EXPECT_GT(out.results.times.seq_comm_us, 0.0);
    }
}

}  // namespace
}  // namespace tandem::host
