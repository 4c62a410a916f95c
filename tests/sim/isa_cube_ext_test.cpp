// The cube's additions: bf16 operands (same cost as fp16 on 910B), TMATMUL_BIAS with a per-column
// (1 x n) or per-row (m x 1) bias in fp32, fp16 or bf16, and the FIX pipe's cast of an fp32
// accumulator into fp16 or bf16 GM, through the deferred cube (a pending store casts when it
// completes) and through a store that crosses the interconnect. Integer-valued data keep every
// fp32 sum exact, so the expected values are exact; the casts round sums past 2048 (fp16) or 256
// (bf16), ties included, and the reference rounding is tests/support/float_ref.hpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/float_ref.hpp"
#include "tests/support/cube_by_hand.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_cube_ext_test {

constexpr int kM = 32, kK = 64, kN = 64;

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

SimTime cyc(double n) { return test::core_cycles(profile(), n); }
SimTime cube_hand(int m, int k, int n, double factor) { return test::cube_by_hand(profile(), m, k, n, factor); }

void put(GmAllocation& a, DType t, std::int64_t i, double v) {
    std::byte* p = a.data.data() + i * dtype_bytes(t);
    if (t == DType::F32) {
        const float f = float(v);
        std::memcpy(p, &f, 4);
    } else {
        const std::uint16_t h = t == DType::F16 ? float_to_half(float(v)) : float_to_bf16(float(v));
        std::memcpy(p, &h, 2);
    }
}

double get(const GmAllocation& a, DType t, std::int64_t i) {
    const std::byte* p = a.data.data() + i * dtype_bytes(t);
    if (t == DType::F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return t == DType::F16 ? half_to_float(h) : bf16_to_float(h);
}

double round_in(DType t, double x) {
    return t == DType::F16 ? test::round_f16(x) : t == DType::BF16 ? test::round_bf16(x) : x;
}

// Integer-valued operands 0..15: exact in fp16 and bf16, and every fp32 sum over K = 64 exact.
// Hashed rather than periodic, so the products spread (about 1700..5600) and many are odd.
double a_val(std::int64_t i) { return double(((std::uint64_t(i) * 2654435761u) % (1ull << 32) >> 11) % 16); }
double b_val(std::int64_t i) { return double(((std::uint64_t(i) * 40503u + 7) % (1ull << 32) >> 3) % 16); }
double b2_val(std::int64_t i) { return double((i * 11 + 2) % 13); }
double bias_val(std::int64_t i) { return double(i % 9) * 16.0 - 40.0; }

// sum_k A[i][k] * B[k][j] (A kM x kK, B kK x kN, row-major), exactly.
double product(int i, int j, const std::function<double(std::int64_t)>& b = b_val) {
    double s = 0;
    for (int k = 0; k < kK; ++k) s += a_val(i * kK + k) * b(k * kN + j);
    return s;
}

// One AIC block's tiles for a kM x kK x kN product in dtype `in`, fenced by barriers.
struct Tiles {
    Tile *aL1, *bL1, *aL0, *bL0, *acc;
    Tiles(BlockCtx& b, DType in)
        : aL1(&b.alloc_tile(MemKind::L1, kM, kK, in, "aL1")),
          bL1(&b.alloc_tile(MemKind::L1, kK, kN, in, "bL1")),
          aL0(&b.alloc_tile(MemKind::L0A, kM, kK, in, "aL0")),
          bL0(&b.alloc_tile(MemKind::L0B, kK, kN, in, "bL0")),
          acc(&b.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "acc")) {}
};

Task load_extract(BlockCtx& b, Tiles& t, const GmTensor& a, const GmTensor& bm) {
    co_await TLOAD(*t.aL1, a);
    co_await TLOAD(*t.bL1, bm);
    pipe_barrier(b, PIPE_ALL);
    TEXTRACT(*t.aL0, *t.aL1, 0, 0);
    TEXTRACT(*t.bL0, *t.bL1, 0, 0);
    pipe_barrier(b, PIPE_ALL);
}

struct Inputs {
    GmAllocation *a, *b, *b2;
};

Inputs make_inputs(Runtime& rt, DType in, int rank = 0) {
    Inputs x{&rt.cluster().chip(rank).gm.allocate("A", std::int64_t{kM} * kK * 2),
             &rt.cluster().chip(rank).gm.allocate("B", std::int64_t{kK} * kN * 2),
             &rt.cluster().chip(rank).gm.allocate("B2", std::int64_t{kK} * kN * 2)};
    if (rt.cluster().functional()) {
        for (std::int64_t i = 0; i < std::int64_t{kM} * kK; ++i) put(*x.a, in, i, a_val(i));
        for (std::int64_t i = 0; i < std::int64_t{kK} * kN; ++i) {
            put(*x.b, in, i, b_val(i));
            put(*x.b2, in, i, b2_val(i));
        }
    }
    return x;
}

GmTensor t_a(const Inputs& x, DType in) { return GmTensor(*x.a, 0, kM, kK, kK, in); }
GmTensor t_b(const GmAllocation& b, DType in) { return GmTensor(b, 0, kK, kN, kN, in); }

// ============================================================ bf16 ==========================

TEST(CubeBf16, CostsWhatTheProfileSaysAndMultipliesExactly) {
    std::vector<SimTime> cube_time;
    for (DType in : {DType::F16, DType::BF16}) {
        Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
        Inputs x = make_inputs(rt, in);
        GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 4);
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tiles t(b, in);
            co_await load_extract(b, t, t_a(x, in), t_b(*x.b, in));
            TMATMUL(*t.acc, *t.aL0, *t.bL0);
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::F32), *t.acc);
        });
        const auto log = rt.cluster().event_log();
        for (const InstrRecord& r : log)
            if (r.op == Opcode::TMATMUL) cube_time.push_back(r.end - r.start);
        for (int i = 0; i < kM; ++i)
            for (int j = 0; j < kN; ++j) ASSERT_EQ(get(c, DType::F32, i * kN + j), product(i, j)) << dtype_name(in);
    }
    ASSERT_EQ(cube_time.size(), 2u);
    EXPECT_EQ(cube_time[0], cube_hand(kM, kK, kN, 1.0));
    EXPECT_EQ(cube_time[1], cube_hand(kM, kK, kN, profile().pipes.cube_bf16_cost_factor));
    EXPECT_EQ(profile().pipes.cube_bf16_cost_factor, 1.0) << "910B: bf16 at the fp16 rate";
}

// Two row blocks sharing B, each over two K steps: the kernel-end drain batches them into one
// product, widening bf16 from GM.
TEST(CubeBf16, BatchedProductsAtKernelEnd) {
    const int M = 2 * kM, K = 2 * (kK / 2);
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{M} * K * 2);
    GmAllocation& bm = rt.host(0).malloc("B", std::int64_t{K} * kN * 2);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{M} * kN * 4);
    for (std::int64_t i = 0; i < std::int64_t{M} * K; ++i) put(a, DType::BF16, i, a_val(i));
    for (std::int64_t i = 0; i < std::int64_t{K} * kN; ++i) put(bm, DType::BF16, i, b_val(i));
    const int kt = kK / 2;
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
        Tile& aL1 = b.alloc_tile(MemKind::L1, kM, kt, DType::BF16, "aL1");
        Tile& bL1 = b.alloc_tile(MemKind::L1, kt, kN, DType::BF16, "bL1");
        Tile& aL0 = b.alloc_tile(MemKind::L0A, kM, kt, DType::BF16, "aL0");
        Tile& bL0 = b.alloc_tile(MemKind::L0B, kt, kN, DType::BF16, "bL0");
        Tile& acc = b.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "acc");
        const GmTensor A(a, 0, M, K, K, DType::BF16), B(bm, 0, K, kN, kN, DType::BF16);
        for (int rb = 0; rb < 2; ++rb) {
            for (int ks = 0; ks < 2; ++ks) {
                co_await TLOAD(aL1, A.sub(rb * kM, ks * kt, kM, kt));
                co_await TLOAD(bL1, B.sub(ks * kt, 0, kt, kN));
                pipe_barrier(b, PIPE_ALL);
                TEXTRACT(aL0, aL1, 0, 0);
                TEXTRACT(bL0, bL1, 0, 0);
                pipe_barrier(b, PIPE_ALL);
                if (ks == 0) TMATMUL(acc, aL0, bL0);
                else TMATMUL_ACC(acc, aL0, bL0);
                pipe_barrier(b, PIPE_ALL);
            }
            co_await TSTORE(GmTensor(c, std::int64_t{rb} * kM * kN * 4, kM, kN, kN, DType::F32), acc);
            pipe_barrier(b, PIPE_ALL);
        }
    });
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < kN; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += a_val(i * K + k) * b_val(k * kN + j);
            ASSERT_EQ(get(c, DType::F32, i * kN + j), s) << i << "," << j;
        }
}

TEST(CubeBf16, MixedOperandTypesAreRejected) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    try {
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tile& a = b.alloc_tile(MemKind::L0A, 16, 16, DType::F16, "a");
            Tile& bb = b.alloc_tile(MemKind::L0B, 16, 16, DType::BF16, "b");
            Tile& c = b.alloc_tile(MemKind::L0C, 16, 16, DType::F32, "c");
            TMATMUL(c, a, bb);
            co_return;
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("fp16, bf16 or fp32 a and b (both the same)"), std::string::npos) << e.what();
    }
}

// ============================================================ bias ==========================

TEST(MatmulBias, PerColumnAndPerRowBiasInEveryDtype) {
    for (DType bias_t : {DType::F32, DType::F16, DType::BF16}) {
        for (bool per_col : {true, false}) {
            Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
            Inputs x = make_inputs(rt, DType::F16);
            const int br = per_col ? 1 : kM, bc = per_col ? kN : 1;
            GmAllocation& bias = rt.host(0).malloc("bias", std::int64_t{br} * bc * 4);
            for (std::int64_t i = 0; i < std::int64_t{br} * bc; ++i) put(bias, bias_t, i, bias_val(i));
            GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 4);
            test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                Tiles t(b, DType::F16);
                Tile& biasL1 = b.alloc_tile(MemKind::L1, br, bc, bias_t, "bias");
                co_await TLOAD(biasL1, GmTensor(bias, 0, br, bc, bc, bias_t));
                co_await load_extract(b, t, t_a(x, DType::F16), t_b(*x.b, DType::F16));
                TMATMUL_BIAS(*t.acc, *t.aL0, *t.bL0, biasL1);
                pipe_barrier(b, PIPE_ALL);
                // A second product on top: acc = bias + A*B + A*B2.
                co_await TLOAD(*t.bL1, t_b(*x.b2, DType::F16));
                pipe_barrier(b, PIPE_ALL);
                TEXTRACT(*t.bL0, *t.bL1, 0, 0);
                pipe_barrier(b, PIPE_ALL);
                TMATMUL_ACC(*t.acc, *t.aL0, *t.bL0);
                pipe_barrier(b, PIPE_ALL);
                co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::F32), *t.acc);
            });
            for (int i = 0; i < kM; ++i)
                for (int j = 0; j < kN; ++j) {
                    const double want = bias_val(per_col ? j : i) + product(i, j) + product(i, j, b2_val);
                    ASSERT_EQ(get(c, DType::F32, i * kN + j), want)
                        << dtype_name(bias_t) << (per_col ? " per column" : " per row") << " at " << i << "," << j;
                }
            const auto log = rt.cluster().event_log();
            int seen = 0;
            for (const InstrRecord& r : log) {
                if (r.op != Opcode::TMATMUL_BIAS) continue;
                ++seen;
                EXPECT_EQ(r.end - r.start, cube_hand(kM, kK, kN, 1.0)) << "TMATMUL_BIAS costs TMATMUL";
                EXPECT_EQ(r.pipe, Pipe::M);
            }
            EXPECT_EQ(seen, 1);
        }
    }
}

TEST(MatmulBias, ABiasOfTheWrongShapeOrPlaceIsRejected) {
    struct Bad {
        MemKind kind;
        int rows, cols;
        const char* part;
    };
    const Bad bads[] = {{MemKind::L1, 2, kN, "must be 1x64 (per column) or 32x1 (per row)"},
                        {MemKind::L0A, 1, kN, "must be an fp32, fp16 or bf16 tile in L1"}};
    for (const Bad& bad : bads) {
        Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
        try {
            test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
                Tiles t(b, DType::F16);
                Tile& bias = b.alloc_tile(bad.kind, bad.rows, bad.cols, DType::F16, "bias");
                TMATMUL_BIAS(*t.acc, *t.aL0, *t.bL0, bias);
                co_return;
            });
            ADD_FAILURE() << "expected an error";
        } catch (const SimError& e) {
            EXPECT_NE(std::string(e.what()).find(bad.part), std::string::npos) << e.what();
        }
    }
}

// ============================================================ FIX casts =====================

// The accumulator's value (a deferred chain) stored into fp16 / bf16 GM is the exact product
// rounded once to the destination dtype; the FIX store moves the destination's bytes.
TEST(FixCast, DeferredStoreIntoFp16AndBf16GivesTheRoundedProduct) {
    for (DType out_t : {DType::F16, DType::BF16}) {
        Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
        Inputs x = make_inputs(rt, DType::F16);
        GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 2);
        GmAllocation& bias = rt.host(0).malloc("bias", kN * 4);
        for (int j = 0; j < kN; ++j) put(bias, DType::F32, j, bias_val(j) + 0.5);  // a fraction: always rounded away
        GmAllocation& c2 = rt.host(0).malloc("C2", std::int64_t{kM} * kN * 2);
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tiles t(b, DType::F16);
            Tile& acc2 = b.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "acc2");
            Tile& biasL1 = b.alloc_tile(MemKind::L1, 1, kN, DType::F32, "bias");
            co_await TLOAD(biasL1, GmTensor(bias, 0, 1, kN, kN, DType::F32));
            co_await load_extract(b, t, t_a(x, DType::F16), t_b(*x.b, DType::F16));
            TMATMUL(*t.acc, *t.aL0, *t.bL0);
            TMATMUL_BIAS(acc2, *t.aL0, *t.bL0, biasL1);
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(GmTensor(c, 0, kM, kN, kN, out_t), *t.acc);
            co_await TSTORE(GmTensor(c2, 0, kM, kN, kN, out_t), acc2);
        });
        int rounded = 0;
        for (int i = 0; i < kM; ++i)
            for (int j = 0; j < kN; ++j) {
                const double p = product(i, j);
                ASSERT_EQ(get(c, out_t, i * kN + j), round_in(out_t, p)) << dtype_name(out_t) << " " << i << "," << j;
                // bias + product is exact in fp32 (a half plus an integer below 2^14), then cast.
                ASSERT_EQ(get(c2, out_t, i * kN + j), round_in(out_t, p + bias_val(j) + 0.5)) << i << "," << j;
                rounded += round_in(out_t, p) != p;
            }
        EXPECT_GT(rounded, 100) << "the data must exercise the rounding";
        const auto log = rt.cluster().event_log();
        int stores = 0;
        for (const InstrRecord& r : log) {
            if (r.op != Opcode::TSTORE) continue;
            ++stores;
            EXPECT_EQ(r.pipe, Pipe::FIX);
            EXPECT_EQ(r.bytes, std::int64_t{kM} * kN * 2);
            // Busy: the fp32 accumulator's read and conversion, or the fp16 write if that is longer
            // (each time rounded to the picosecond on its own path: 1 ps apart at most).
            EXPECT_NEAR(r.end - r.start,
                        cyc(profile().pipes.gm_access_latency_cycles) +
                            std::max(bytes_at_gib_s(double(kM * kN * 4), profile().pipes.fix_l0c_read_gib_s),
                                     bytes_at_gib_s(double(kM * kN * 2), profile().pipes.l0c_to_gm_gib_s)),
                        1);
        }
        EXPECT_EQ(stores, 2);
    }
}

// An accumulator stored across the interconnect is computed now and cast on the way as well.
TEST(FixCast, RemoteStoreFromL0cCastsAndCountsTheNarrowBytes) {
    Runtime rt(profile(), ClusterOptions{2, DataMode::Functional, false});
    Inputs x = make_inputs(rt, DType::BF16);
    GmAllocation& win = rt.cluster().chip(1).gm.allocate("win", std::int64_t{kM} * kN * 2, /*shared=*/true);
    KernelStats stats;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("s0");
        s.launch(KernelLaunch{"remote_fix", CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tiles t(b, DType::BF16);
            co_await load_extract(b, t, t_a(x, DType::BF16), t_b(*x.b, DType::BF16));
            TMATMUL(*t.acc, *t.aL0, *t.bL0);
            pipe_barrier(b, PIPE_ALL);
            co_await TSTORE(GmTensor(win, 0, kM, kN, kN, DType::F16), *t.acc);
        }});
        s.synchronize();
        stats = s.kernel_stats().back();
    });
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) ASSERT_EQ(get(win, DType::F16, i * kN + j), test::round_f16(product(i, j))) << i << "," << j;
    EXPECT_EQ(stats.remote_store_bytes, std::int64_t{kM} * kN * 2);
    EXPECT_EQ(stats.remote_load_bytes, 0);
}

TEST(FixCast, OnlyAnFp32AccumulatorCasts) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    GmAllocation& c = rt.host(0).malloc("C", 16 * 16 * 4);
    try {
        test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& ub = b.alloc_tile(MemKind::UB, 16, 16, DType::F32, "ub");
            co_await TSTORE(GmTensor(c, 0, 16, 16, 16, DType::F16), ub);  // MTE3 does not cast
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("TSTORE: tile 'ub' is 16x16 fp32 but the GM tensor is"), std::string::npos) << e.what();
    }
}

// ============================================================ modes =========================

TEST(CubeModes, FunctionalAndTimingOnlyGiveTheSameTimes) {
    std::vector<std::vector<InstrRecord>> logs;
    for (DataMode mode : {DataMode::Functional, DataMode::TimingOnly}) {
        Runtime rt(profile(), ClusterOptions{1, mode, true});
        Inputs x = make_inputs(rt, DType::BF16);
        GmAllocation& bias = rt.host(0).malloc("bias", kM * 2);
        GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 2);
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tiles t(b, DType::BF16);
            Tile& biasL1 = b.alloc_tile(MemKind::L1, kM, 1, DType::BF16, "bias");
            co_await TLOAD(biasL1, GmTensor(bias, 0, kM, 1, 1, DType::BF16));
            co_await load_extract(b, t, t_a(x, DType::BF16), t_b(*x.b, DType::BF16));
            TMATMUL_BIAS(*t.acc, *t.aL0, *t.bL0, biasL1);
            TMATMUL_ACC(*t.acc, *t.aL0, *t.bL0);
            set_flag(b, PIPE_M, PIPE_FIX, 0);
            wait_flag(b, PIPE_M, PIPE_FIX, 0);
            co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::BF16), *t.acc);
        });
        logs.push_back(rt.cluster().event_log());
    }
    ASSERT_EQ(logs[0].size(), logs[1].size());
    for (std::size_t i = 0; i < logs[0].size(); ++i) EXPECT_EQ(format_record(logs[0][i]), format_record(logs[1][i])) << i;
}

}  // namespace isa_cube_ext_test
}  // namespace tandem
