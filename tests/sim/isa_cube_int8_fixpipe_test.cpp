// int8 operands on the cube into an int32 L0C and out through the FIX pipe (the Iris-family ops'
// int8 path, docs/IRIS.md "int8"): TSTORE from an int32 accumulator into an fp32 GM tensor
// converts each sum (exact below 2^24), plainly and as an atomic add; into anything else it is
// refused. The cube's time is the fp16 fractal count times pipes.cube_int8_cost_factor, written
// out by hand (tests/support/cube_by_hand.hpp); the store costs the fp32 bytes it writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/cube_by_hand.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_cube_int8_fixpipe_test {

// A panel two fp16 panels deep (int8's K panel), in two K steps as the GEMM pipeline takes it.
constexpr int kM = 32, kK = 128, kN = 64, kStep = kK / 2;

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

// Every int8 value, negatives and both extremes included.
std::int8_t a_val(int i) { return static_cast<std::int8_t>((i * 37 + 11) % 256 - 128); }
std::int8_t b_val(int i) { return static_cast<std::int8_t>((i * 53 + 5) % 255 - 127); }

std::int32_t exact_sum(int i, int j) {
    std::int32_t s = 0;
    for (int p = 0; p < kK; ++p) s += std::int32_t{a_val(i * kK + p)} * b_val(p * kN + j);
    return s;
}

float read_float(const GmAllocation& a, std::int64_t i) {
    float f;
    std::memcpy(&f, a.data.data() + i * 4, 4);
    return f;
}

// One kM x kK x kN int8 product in two K steps, stored `stores` times into C (fp32) with
// `atomic`; the log's records by opcode.
std::multimap<Opcode, InstrRecord> int8_product(GmAllocation** c_out, Runtime& rt, int stores, AtomicType atomic) {
    GmAllocation& a = rt.host(0).malloc("A", kM * kK);
    GmAllocation& b = rt.host(0).malloc("B", kK * kN);
    GmAllocation& c = rt.host(0).malloc("C", kM * kN * 4);
    for (int i = 0; i < kM * kK; ++i) a.data.data()[i] = static_cast<std::byte>(a_val(i));
    for (int i = 0; i < kK * kN; ++i) b.data.data()[i] = static_cast<std::byte>(b_val(i));
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tile& aL1 = blk.alloc_tile(MemKind::L1, kM, kK, DType::I8, "aL1");
        Tile& bL1 = blk.alloc_tile(MemKind::L1, kK, kN, DType::I8, "bL1");
        Tile& aL0 = blk.alloc_tile(MemKind::L0A, kM, kStep, DType::I8, "aL0");
        Tile& bL0 = blk.alloc_tile(MemKind::L0B, kStep, kN, DType::I8, "bL0");
        Tile& acc = blk.alloc_tile(MemKind::L0C, kM, kN, DType::I32, "acc");
        co_await TLOAD(aL1, GmTensor(a, 0, kM, kK, kK, DType::I8));
        co_await TLOAD(bL1, GmTensor(b, 0, kK, kN, kN, DType::I8));
        pipe_barrier(blk, PIPE_ALL);
        for (int k = 0; k < 2; ++k) {
            TEXTRACT(aL0, aL1, 0, k * kStep);
            TEXTRACT(bL0, bL1, k * kStep, 0);
            pipe_barrier(blk, PIPE_ALL);
            if (k == 0) TMATMUL(acc, aL0, bL0);
            else TMATMUL_ACC(acc, aL0, bL0);
            pipe_barrier(blk, PIPE_ALL);
        }
        for (int s = 0; s < stores; ++s) {
            co_await TSTORE(GmTensor(c, 0, kM, kN, kN, DType::F32), acc, atomic);
            pipe_barrier(blk, PIPE_ALL);
        }
    });
    *c_out = &c;
    std::multimap<Opcode, InstrRecord> by_op;
    for (const InstrRecord& r : rt.cluster().event_log()) by_op.emplace(r.op, r);
    return by_op;
}

TEST(CubeInt8Fixpipe, Int32SumsLeaveL0CAsExactFp32AtTheInt8CubeCost) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation* c = nullptr;
    const auto log = int8_product(&c, rt, 1, AtomicType::None);
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) ASSERT_EQ(read_float(*c, i * kN + j), float(exact_sum(i, j))) << i << "," << j;
    // The sums span both signs and more than int16's range: the conversion is of int32 values.
    EXPECT_LT(exact_sum(0, 0) * exact_sum(1, 3), 0) << exact_sum(0, 0) << " " << exact_sum(1, 3);
    // Each K step's cost, by hand: cube_fixed_cycles + fractals x 0.5 (int8 runs twice fp16's rate).
    const double factor = profile().pipes.cube_int8_cost_factor;
    EXPECT_EQ(factor, 0.5);
    int matmuls = 0;
    for (Opcode op : {Opcode::TMATMUL, Opcode::TMATMUL_ACC}) {
        for (auto [it, end] = log.equal_range(op); it != end; ++it) {
            ++matmuls;
            EXPECT_EQ(it->second.end - it->second.start, test::cube_by_hand(profile(), kM, kStep, kN, factor));
        }
    }
    EXPECT_EQ(matmuls, 2);
    // The FIX store writes the fp32 bytes (as many as the int32 accumulator holds).
    ASSERT_EQ(log.count(Opcode::TSTORE), 1u);
    EXPECT_EQ(log.find(Opcode::TSTORE)->second.bytes, std::int64_t{kM} * kN * 4);
}

TEST(CubeInt8Fixpipe, AtomicAddsConvertToo) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation* c = nullptr;
    const auto log = int8_product(&c, rt, 2, AtomicType::AtomicAdd);
    EXPECT_EQ(log.count(Opcode::TSTORE_ATOMIC_ADD), 2u);
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) ASSERT_EQ(read_float(*c, i * kN + j), 2.0f * float(exact_sum(i, j))) << i << "," << j;
}

// Only fp32 takes an int32 accumulator: fp16 would need the dequant's scale (TSTORE_FP).
TEST(CubeInt8Fixpipe, AnInt32AccumulatorIntoFp16IsRefused) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    GmAllocation& c = rt.host(0).malloc("C", 16 * 16 * 2);
    try {
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
            Tile& acc = blk.alloc_tile(MemKind::L0C, 16, 16, DType::I32, "acc");
            co_await TSTORE(GmTensor(c, 0, 16, 16, 16, DType::F16), acc);
        });
        ADD_FAILURE() << "expected an error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("tile 'acc' is 16x16 int32"), std::string::npos) << e.what();
    }
}

}  // namespace isa_cube_int8_fixpipe_test
}  // namespace tandem
