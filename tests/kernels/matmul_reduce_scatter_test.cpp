// matmul_reduce_scatter, what is its own (tests/kernels/op_conformance_test.cpp checks what every op must
// do): the op's registration and payload; one ready flag per source and owned tile; N not
// splitting into whole-tile column blocks is refused with the rule; on 2 ranks every variant
// overlaps; the baseline reduce-scatter follows the topology (ring profile).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/cli/options.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "kernels/matmul_reduce_scatter/mrs_run.hpp"
#include "kernels/matmul_reduce_scatter/op.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/op_run.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace matmul_reduce_scatter_test {

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

RunRequest config(const std::string& variant, const Case& c, bool timing_only = false) {
    RunRequest cfg;
    cfg.op = "matmul_reduce_scatter";
    cfg.variant = variant;
    cfg.ranks = c.ranks;
    cfg.m = c.m;
    cfg.k = c.k;
    cfg.n = c.n;
    cfg.base_n = c.base_n;
    cfg.dtype = parse_dtype_text(c.dtype);
    cfg.out_dtype = parse_dtype_text(c.out_dtype);
    cfg.bias = parse_bias_text(c.bias);
    cfg.timing_only = timing_only;
    return cfg;
}

ProgramOutput run(RunRequest cfg, const std::string& fault = "", const std::string& soc = "") {
    cfg.fault = fault;
    return test::run_op(cfg, soc.empty() ? test::b1_profile() : test::profile_named(soc));
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

TEST(MatmulReduceScatter, NNotWholeTileColumnBlocksIsRefusedWithTheRule) {
    for (const std::string& v : variants()) {
        const std::string msg = test::refusal_of(config(v, Case{4, 256, 256, 1000}));
        EXPECT_NE(msg.find("--gn 1000"), std::string::npos) << v << ": " << msg;
        EXPECT_NE(msg.find("nearest valid: 1024"), std::string::npos) << msg;
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

// On a double ring (test::double_ring_profile) the baseline reduce-scatter is the ring algorithm, and the
// variants still verify.
TEST(MatmulReduceScatter, RingTopologyProfile) {
    for (const std::string& v : variants()) {
        SCOPED_TRACE(v);
        const ProgramOutput out = test::run_op(config(v, Case{4, 256, 256, 512}), test::double_ring_profile());
        EXPECT_EQ(out.results.verification, Verification::Passed) << out.failure_report;
        EXPECT_GT(out.results.times.seq_comm_us, 0.0);
    }
}

}  // namespace matmul_reduce_scatter_test
}  // namespace tandem::host
