// fp32 operands on the cube (the Iris-family ops' fp32 inputs): the cube takes fp32 L0A/L0B tiles
// into the fp32 L0C at pipes.cube_fp32_cost_factor (4.0, pto-isa's cube cost model; an fp32 fractal holds 16 x 8 values,
// half the K depth of an fp16 one) times the fp16 fractal count, and every move costs its bytes
// (4 per fp32 element). The sums are fp32 sums of the fp32 values: values no fp16 holds (4097,
// thirds) come out as fp32 computes them, through the deferred chain, the kernel-end batch and a
// GM region overwritten after it was loaded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/cube_by_hand.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_cube_fp32_test {

constexpr int kM = 32, kK = 64, kN = 64;

const Profile& fp32_profile() {
    static const Profile p = test::b1_profile();
    return p;
}

SimTime cycles(double n) { return test::core_cycles(fp32_profile(), n); }

SimTime cube_by_hand(int m, int k, int n, double factor) { return test::cube_by_hand(fp32_profile(), m, k, n, factor); }

// Values fp16 cannot hold (4097 needs 13 significant bits; thirds are not dyadic): an fp16
// product would differ from the fp32 one.
float a_val(std::int64_t i) { return i % 5 == 0 ? 4097.0f : float(i % 7 - 3) / 3.0f; }
float b_val(std::int64_t i) { return float(i % 11 - 5) / 3.0f; }

void fill(GmAllocation& a, DType t, std::int64_t count, const std::function<float(std::int64_t)>& value) {
    for (std::int64_t i = 0; i < count; ++i) {
        if (t == DType::F32) {
            const float f = value(i);
            std::memcpy(a.data.data() + i * 4, &f, 4);
        } else {  // fp16 runs only time the cube here: its values do not matter
            const std::uint16_t h = 0x3C00;  // 1.0
            std::memcpy(a.data.data() + i * 2, &h, 2);
        }
    }
}

float read_float(const GmAllocation& a, std::int64_t i) {
    float f;
    std::memcpy(&f, a.data.data() + i * 4, 4);
    return f;
}

// The fp32 sum of row i of A (rows x k, row-major, from element `a0`) times column j of B
// (k x n), accumulated in fp32 in K order.
float fp32_dot(int i, int j, int k, int n) {
    float s = 0;
    for (int p = 0; p < k; ++p) s += a_val(std::int64_t{i} * k + p) * b_val(std::int64_t{p} * n + j);
    return s;
}

// Whether an fp32 result `got` is the fp32 product: within a few fp32 ulps of the sum's
// magnitude (sgemm's association order is not the loop's).
void expect_fp32_sum(float got, int i, int j, int k, int n) {
    double exact = 0, magnitude = 0;
    for (int p = 0; p < k; ++p) {
        const double term = double(a_val(std::int64_t{i} * k + p)) * double(b_val(std::int64_t{p} * n + j));
        exact += term;
        magnitude += std::fabs(term);
    }
    EXPECT_NEAR(got, exact, magnitude * 4e-7 + 1e-6) << i << "," << j;
    EXPECT_NEAR(got, fp32_dot(i, j, k, n), magnitude * 4e-7 + 1e-6) << i << "," << j;
}

struct Tiles {
    Tile *aL1, *bL1, *aL0, *bL0, *acc;
    Tiles(BlockCtx& b, DType in, int m, int k, int n)
        : aL1(&b.alloc_tile(MemKind::L1, m, k, in, "aL1")),
          bL1(&b.alloc_tile(MemKind::L1, k, n, in, "bL1")),
          aL0(&b.alloc_tile(MemKind::L0A, m, k, in, "aL0")),
          bL0(&b.alloc_tile(MemKind::L0B, k, n, in, "bL0")),
          acc(&b.alloc_tile(MemKind::L0C, m, n, DType::F32, "acc")) {}
};

// One kM x kK x kN product in `in`, every step fenced: the log's records by opcode.
std::multimap<Opcode, InstrRecord> one_product(DType in, std::vector<float>* out = nullptr) {
    Runtime rt(fp32_profile(), ClusterOptions{1, DataMode::Functional, true});
    const std::int64_t es = dtype_bytes(in);
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{kM} * kK * es);
    GmAllocation& b = rt.host(0).malloc("B", std::int64_t{kK} * kN * es);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 4);
    fill(a, in, std::int64_t{kM} * kK, a_val);
    fill(b, in, std::int64_t{kK} * kN, b_val);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tiles t(blk, in, kM, kK, kN);
        co_await TLOAD(*t.aL1, GmTensor(a, 0, kM, kK, kK, in));
        co_await TLOAD(*t.bL1, GmTensor(b, 0, kK, kN, kN, in));
        pipe_barrier(blk, PIPE_ALL);
        TEXTRACT(*t.aL0, *t.aL1, 0, 0);
        TEXTRACT(*t.bL0, *t.bL1, 0, 0);
        pipe_barrier(blk, PIPE_ALL);
        TMATMUL(*t.acc, *t.aL0, *t.bL0);
        pipe_barrier(blk, PIPE_ALL);
        co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::F32), *t.acc);
    });
    if (out != nullptr) {
        out->resize(std::size_t{kM} * kN);
        for (std::int64_t i = 0; i < std::int64_t{kM} * kN; ++i) (*out)[std::size_t(i)] = read_float(c, i);
    }
    std::multimap<Opcode, InstrRecord> by_op;
    for (const InstrRecord& r : rt.cluster().event_log()) by_op.emplace(r.op, r);
    return by_op;
}

TEST(CubeFp32, CostsFourTimesTheFp16FractalCountAndItsMovesTwiceTheBytes) {
    const auto f16 = one_product(DType::F16);
    const auto f32 = one_product(DType::F32);
    ASSERT_EQ(f16.count(Opcode::TMATMUL), 1u);
    ASSERT_EQ(f32.count(Opcode::TMATMUL), 1u);
    const InstrRecord& mm16 = f16.find(Opcode::TMATMUL)->second;
    const InstrRecord& mm32 = f32.find(Opcode::TMATMUL)->second;
    EXPECT_EQ(mm16.end - mm16.start, cube_by_hand(kM, kK, kN, 1.0));
    EXPECT_EQ(mm32.end - mm32.start, cube_by_hand(kM, kK, kN, fp32_profile().pipes.cube_fp32_cost_factor));
    EXPECT_EQ(fp32_profile().pipes.cube_fp32_cost_factor, 4.0) << "pto-isa's cube cost model: 2 cycles per 16x8x16 fp32 repeat";
    // The fractal term (the time past the fixed cycles) is four times fp16's.
    const SimTime fixed = cycles(fp32_profile().pipes.cube_fixed_cycles);
    EXPECT_NEAR(static_cast<double>(mm32.end - mm32.start - fixed), 4.0 * static_cast<double>(mm16.end - mm16.start - fixed),
                2.0);  // each duration is rounded to a whole picosecond
    // Moves: each fp32 TLOAD and TEXTRACT carries twice the fp16 bytes.
    for (Opcode op : {Opcode::TLOAD, Opcode::TEXTRACT}) {
        std::vector<std::int64_t> b16, b32;
        for (auto [it, end] = f16.equal_range(op); it != end; ++it) b16.push_back(it->second.bytes);
        for (auto [it, end] = f32.equal_range(op); it != end; ++it) b32.push_back(it->second.bytes);
        ASSERT_EQ(b16.size(), 2u);
        ASSERT_EQ(b32.size(), b16.size());
        for (std::size_t i = 0; i < b16.size(); ++i) EXPECT_EQ(b32[i], 2 * b16[i]) << opcode_name(op) << " " << i;
    }
    // The fp32 TEXTRACT into L0B takes longer than the fp16 one (its bytes at the same rate).
    auto extract_time = [](const std::multimap<Opcode, InstrRecord>& log) {
        SimTime longest = 0;
        for (auto [it, end] = log.equal_range(Opcode::TEXTRACT); it != end; ++it)
            longest = std::max(longest, it->second.end - it->second.start);
        return longest;
    };
    EXPECT_GT(extract_time(f32), extract_time(f16));
}

TEST(CubeFp32, MultipliesInFp32) {
    std::vector<float> c;
    one_product(DType::F32, &c);
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) expect_fp32_sum(c[std::size_t(i) * kN + j], i, j, kK, kN);
    // 4097 survives: an fp16 operand would have been 4096.
    EXPECT_EQ(a_val(0), 4097.0f);
}

// Two row blocks sharing B, each over two K steps, stored at kernel end: the drain batches them
// into one product over fp32 operands read straight from GM.
TEST(CubeFp32, BatchedProductsAtKernelEnd) {
    const int M = 2 * kM, K = kK, half = K / 2;
    Runtime rt(fp32_profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{M} * K * 4);
    GmAllocation& bm = rt.host(0).malloc("B", std::int64_t{K} * kN * 4);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{M} * kN * 4);
    fill(a, DType::F32, std::int64_t{M} * K, a_val);
    fill(bm, DType::F32, std::int64_t{K} * kN, b_val);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tile& aL1 = blk.alloc_tile(MemKind::L1, kM, half, DType::F32, "aL1");
        Tile& bL1 = blk.alloc_tile(MemKind::L1, half, kN, DType::F32, "bL1");
        Tile& aL0 = blk.alloc_tile(MemKind::L0A, kM, half, DType::F32, "aL0");
        Tile& bL0 = blk.alloc_tile(MemKind::L0B, half, kN, DType::F32, "bL0");
        Tile& acc = blk.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "acc");
        const GmTensor A(a, 0, M, K, K, DType::F32);
        const GmTensor B(bm, 0, K, kN, kN, DType::F32);
        const GmTensor C(c, 0, M, kN, kN, DType::F32);
        for (int rb = 0; rb < 2; ++rb) {
            for (int ks = 0; ks < 2; ++ks) {
                co_await TLOAD(aL1, A.sub(rb * kM, ks * half, kM, half));
                co_await TLOAD(bL1, B.sub(ks * half, 0, half, kN));
                pipe_barrier(blk, PIPE_ALL);
                TEXTRACT(aL0, aL1, 0, 0);
                TEXTRACT(bL0, bL1, 0, 0);
                pipe_barrier(blk, PIPE_ALL);
                if (ks == 0) TMATMUL(acc, aL0, bL0);
                else TMATMUL_ACC(acc, aL0, bL0);
                pipe_barrier(blk, PIPE_ALL);
            }
            co_await TSTORE(C.sub(rb * kM, 0, kM, kN), acc);
            pipe_barrier(blk, PIPE_ALL);
        }
    });
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < kN; ++j) expect_fp32_sum(read_float(c, std::int64_t{i} * kN + j), i, j, K, kN);
}

// A's GM is overwritten after A was loaded into L1 and before the cube reads it: the product
// uses the fp32 values that were loaded.
TEST(CubeFp32, LoadedTileKeepsItsFp32ValuesWhenGmIsOverwritten) {
    Runtime rt(fp32_profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{kM} * kK * 4);
    GmAllocation& bm = rt.host(0).malloc("B", std::int64_t{kK} * kN * 4);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 4);
    fill(a, DType::F32, std::int64_t{kM} * kK, a_val);
    fill(bm, DType::F32, std::int64_t{kK} * kN, b_val);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tiles t(blk, DType::F32, kM, kK, kN);
        const GmTensor A(a, 0, kM, kK, kK, DType::F32);
        co_await TLOAD(*t.aL1, A);
        co_await TLOAD(*t.bL1, GmTensor(bm, 0, kK, kN, kN, DType::F32));
        pipe_barrier(blk, PIPE_ALL);
        // acc = A * B[:, :kK] (kK == kN), stored over A itself.
        TEXTRACT(*t.aL0, *t.aL1, 0, 0);
        TEXTRACT(*t.bL0, *t.bL1, 0, 0);
        pipe_barrier(blk, PIPE_ALL);
        TMATMUL(*t.acc, *t.aL0, *t.bL0);
        pipe_barrier(blk, PIPE_ALL);
        co_await TSTORE(A, *t.acc);
        pipe_barrier(blk, PIPE_ALL);
        TMATMUL(*t.acc, *t.aL0, *t.bL0);  // from the L0 copies of what was loaded
        pipe_barrier(blk, PIPE_ALL);
        co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::F32), *t.acc);
    });
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) {
            expect_fp32_sum(read_float(c, std::int64_t{i} * kN + j), i, j, kK, kN);
            EXPECT_EQ(read_float(c, std::int64_t{i} * kN + j), read_float(a, std::int64_t{i} * kK + j)) << i << "," << j;
        }
}

TEST(CubeFp32, MixedFp32AndFp16OperandsAreRejected) {
    Runtime rt(fp32_profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    try {
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tile& a = b.alloc_tile(MemKind::L0A, 16, 16, DType::F32, "a");
            Tile& bb = b.alloc_tile(MemKind::L0B, 16, 16, DType::F16, "b");
            Tile& c = b.alloc_tile(MemKind::L0C, 16, 16, DType::F32, "c");
            TMATMUL(c, a, bb);
            co_return;
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("fp16, bf16 or fp32 a and b (both the same)"), std::string::npos) << e.what();
    }
}

}  // namespace isa_cube_fp32_test
}  // namespace tandem
