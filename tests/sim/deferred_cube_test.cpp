// The deferred cube (sim/isa/deferred_cube.hpp, sim/mem/gm_deferred.hpp): deferring loads,
// products and stores must never change what an instruction or the host sees. Each test makes
// a deferred effect meet an access that could observe it, and checks the bytes against a
// reference computed here. Values are small multiples of 1/8, so every sum is exact in fp32.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace deferred_cube_test {

constexpr int kM = 32, kK = 64, kN = 64;

float a_val(std::int64_t i) { return float(i % 13 - 6) / 8.0f; }
float b_val(std::int64_t i) { return float(i % 11 - 5) / 8.0f; }
float b2_val(std::int64_t i) { return float(i % 7 - 3) / 8.0f; }

void fill_f16(GmAllocation& a, std::int64_t count, const std::function<float(std::int64_t)>& value) {
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint16_t h = float_to_half(value(i));
        std::memcpy(a.data.data() + i * 2, &h, 2);
    }
}

std::vector<float> read_f32(const GmAllocation& a, std::int64_t offset_bytes, std::int64_t count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    std::memcpy(v.data(), a.data.data() + offset_bytes, static_cast<std::size_t>(count) * 4);
    return v;
}

// C = A (kM x kK, from fa) * B (kK x kN, from fb), both row-major, in double.
std::vector<float> reference(const std::function<float(std::int64_t)>& fa, const std::function<float(std::int64_t)>& fb) {
    std::vector<float> c(kM * kN);
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN; ++j) {
            double s = 0;
            for (int k = 0; k < kK; ++k) s += double(fa(i * kK + k)) * double(fb(k * kN + j));
            c[std::size_t(i) * kN + j] = float(s);
        }
    return c;
}

// One AIC block's tiles for a kM x kK x kN product, used strictly in order (every step fenced
// by a barrier on all pipes, so no flag logic can hide a mistake in the data path).
struct Tiles {
    Tile *aL1, *bL1, *aL0, *bL0, *acc;
    explicit Tiles(BlockCtx& b)
        : aL1(&b.alloc_tile(MemKind::L1, kM, kK, DType::F16, "aL1")),
          bL1(&b.alloc_tile(MemKind::L1, kK, kN, DType::F16, "bL1")),
          aL0(&b.alloc_tile(MemKind::L0A, kM, kK, DType::F16, "aL0")),
          bL0(&b.alloc_tile(MemKind::L0B, kK, kN, DType::F16, "bL0")),
          acc(&b.alloc_tile(MemKind::L0C, kM, kN, DType::F32, "acc")) {}
};

Task load(BlockCtx& b, Tiles& t, const GmTensor& a, const GmTensor& bm) {
    co_await TLOAD(*t.aL1, a);
    co_await TLOAD(*t.bL1, bm);
    pipe_barrier(b, PIPE_ALL);
}

void multiply(BlockCtx& b, Tiles& t, bool accumulate) {
    TEXTRACT(*t.aL0, *t.aL1, 0, 0);
    TEXTRACT(*t.bL0, *t.bL1, 0, 0);
    pipe_barrier(b, PIPE_ALL);
    if (accumulate) TMATMUL_ACC(*t.acc, *t.aL0, *t.bL0);
    else TMATMUL(*t.acc, *t.aL0, *t.bL0);
    pipe_barrier(b, PIPE_ALL);
}

Task store(BlockCtx& b, Tiles& t, const GmTensor& c) {
    co_await TSTORE(c, *t.acc);
    pipe_barrier(b, PIPE_ALL);
}

GmTensor f16(const GmAllocation& a, int rows, int cols) { return GmTensor(a, 0, rows, cols, cols, DType::F16); }
GmTensor f32(const GmAllocation& a, std::int64_t offset, int rows, int cols) { return GmTensor(a, offset, rows, cols, cols, DType::F32); }

struct Fixture {
    Runtime rt{test::b1_profile(), ClusterOptions{1, DataMode::Functional, false}};
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{kM} * kK * 2);
    GmAllocation& b = rt.host(0).malloc("B", std::int64_t{kK} * kN * 2);
    GmAllocation& b2 = rt.host(0).malloc("B2", std::int64_t{kK} * kN * 2);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{kM} * kN * 4 * 2);
    Fixture() {
        fill_f16(a, kM * kK, a_val);
        fill_f16(b, kK * kN, b_val);
        fill_f16(b2, kK * kN, b2_val);
    }
};

TEST(DeferredCube, LoadedTileKeepsItsBytesWhenGmIsOverwrittenBeforeUse) {
    Fixture f;
    // A's bytes are overwritten (by a store of an fp32 result over them) after A was loaded into
    // L1 but before the cube reads it: the product must still use the A that was loaded.
    const GmTensor a_as_f32(f.a, 0, kM, kK / 2, kK / 2, DType::F32);  // the same bytes as A
    ASSERT_EQ(a_as_f32.bytes(), std::int64_t{kM} * kK * 2);
    test::run_one_kernel(f.rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tiles t(blk);
        Tile& small = blk.alloc_tile(MemKind::L0C, kM, kK / 2, DType::F32, "small");
        Tile& bHalfL1 = blk.alloc_tile(MemKind::L1, kK, kK / 2, DType::F16, "bHalfL1");
        Tile& bHalfL0 = blk.alloc_tile(MemKind::L0B, kK, kK / 2, DType::F16, "bHalfL0");
        co_await load(blk, t, f16(f.a, kM, kK), f16(f.b, kK, kN));
        // small = A * B[:, :kK/2], stored over A itself.
        co_await TLOAD(bHalfL1, GmTensor(f.b, 0, kK, kK / 2, kN, DType::F16));
        pipe_barrier(blk, PIPE_ALL);
        TEXTRACT(*t.aL0, *t.aL1, 0, 0);
        TEXTRACT(bHalfL0, bHalfL1, 0, 0);
        pipe_barrier(blk, PIPE_ALL);
        TMATMUL(small, *t.aL0, bHalfL0);
        pipe_barrier(blk, PIPE_ALL);
        co_await TSTORE(a_as_f32, small);
        pipe_barrier(blk, PIPE_ALL);
        // Now the full product from the L1 copy of A loaded before the overwrite.
        multiply(blk, t, false);
        co_await store(blk, t, f32(f.c, 0, kM, kN));
    });
    EXPECT_EQ(read_f32(f.c, 0, kM * kN), reference(a_val, b_val));
    // And the overwrite landed: A's bytes hold A * B[:, :kK/2].
    const std::vector<float> full = reference(a_val, b_val);
    const std::vector<float> over = read_f32(f.a, 0, std::int64_t{kM} * kK / 2);
    for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kK / 2; ++j) ASSERT_EQ(over[std::size_t(i) * (kK / 2) + j], full[std::size_t(i) * kN + j]) << i << "," << j;
}

TEST(DeferredCube, AccumulatorStoredTwiceKeepsEachValue) {
    Fixture f;
    // acc = A*B, stored; acc += A*B2, stored elsewhere: the first store keeps A*B.
    test::run_one_kernel(f.rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tiles t(blk);
        co_await load(blk, t, f16(f.a, kM, kK), f16(f.b, kK, kN));
        multiply(blk, t, false);
        co_await store(blk, t, f32(f.c, 0, kM, kN));
        co_await load(blk, t, f16(f.a, kM, kK), f16(f.b2, kK, kN));
        multiply(blk, t, true);
        co_await store(blk, t, f32(f.c, std::int64_t{kM} * kN * 4, kM, kN));
    });
    const std::vector<float> ab = reference(a_val, b_val);
    const std::vector<float> ab2 = reference(a_val, b2_val);
    EXPECT_EQ(read_f32(f.c, 0, kM * kN), ab);
    const std::vector<float> both = read_f32(f.c, std::int64_t{kM} * kN * 4, kM * kN);
    for (std::size_t i = 0; i < both.size(); ++i) ASSERT_EQ(both[i], ab[i] + ab2[i]) << i;
}

TEST(DeferredCube, LaterStoreToTheSameRegionWins) {
    // Both orders, so that neither can pass by the order the kernel end happens to complete them.
    for (const bool b2_first : {true, false}) {
        Fixture f;
        const GmAllocation& first = b2_first ? f.b2 : f.b;
        const GmAllocation& second = b2_first ? f.b : f.b2;
        test::run_one_kernel(f.rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
            Tiles t(blk);
            co_await load(blk, t, f16(f.a, kM, kK), f16(first, kK, kN));
            multiply(blk, t, false);
            co_await store(blk, t, f32(f.c, 0, kM, kN));
            co_await load(blk, t, f16(f.a, kM, kK), f16(second, kK, kN));
            multiply(blk, t, false);
            co_await store(blk, t, f32(f.c, 0, kM, kN));
        });
        EXPECT_EQ(read_f32(f.c, 0, kM * kN), reference(a_val, b2_first ? b_val : b2_val)) << "b2 first: " << b2_first;
    }
}

TEST(DeferredCube, StoredResultIsSeenByAnotherStreamThatWaitsForIt) {
    // The cube's store is deferred; a vector kernel on another stream waits for the cube's flag,
    // then copies C through UB: it must copy the product, not the zeros C held before. The cube
    // kernel waits for the copy to finish before it ends, so its own end-of-kernel completion
    // cannot have written C first: the read itself must complete the store.
    Fixture f;
    GmAllocation& flags = f.rt.host(0).malloc("flags", 64);
    GmAllocation& copy = f.rt.host(0).malloc("copy", std::int64_t{kM} * kN * 4);
    const SignalAddr flag{0, flags.base};
    const SignalAddr copied{0, flags.base + 4};
    f.rt.run_hosts([&](HostContext& host) {
        Stream& cube = host.create_stream("cube");
        Stream& vec = host.create_stream("vec");
        vec.launch(KernelLaunch{"copy", CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
            Tile& ub = blk.alloc_tile(MemKind::UB, kM, kN, DType::F32, "ub");
            co_await TWAIT(blk, flag, CmpOp::GE, 1);
            co_await TLOAD(ub, f32(f.c, 0, kM, kN));
            pipe_barrier(blk, PIPE_ALL);
            co_await TSTORE(f32(copy, 0, kM, kN), ub);
            pipe_barrier(blk, PIPE_ALL);
            TNOTIFY(blk, copied, 1, NotifyOp::Set);
        }});
        cube.launch(KernelLaunch{"gemm", CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
            Tiles t(blk);
            co_await load(blk, t, f16(f.a, kM, kK), f16(f.b, kK, kN));
            multiply(blk, t, false);
            co_await store(blk, t, f32(f.c, 0, kM, kN));
            TNOTIFY(blk, flag, 1, NotifyOp::Set);
            co_await TWAIT(blk, copied, CmpOp::GE, 1);
        }});
        cube.synchronize();
        vec.synchronize();
    });
    EXPECT_EQ(read_f32(copy, 0, kM * kN), reference(a_val, b_val));
}

TEST(DeferredCube, ManyTilesOfOneGemmBatchedAtKernelEndEqualTheProduct) {
    // Eight blocks each computing a 128-row block of a 1024 x 128 output, two 64-wide K steps
    // per tile: the stores stack into one batch at kernel end, computed in two 512-row bands.
    // Checked against the exact product.
    constexpr int M = 1024, K = 128, N = 128, bm = 128, bn = 64, bk = 64;
    Runtime rt{test::b1_profile(), ClusterOptions{1, DataMode::Functional, false}};
    GmAllocation& a = rt.host(0).malloc("A", std::int64_t{M} * K * 2);
    GmAllocation& b = rt.host(0).malloc("B", std::int64_t{K} * N * 2);
    GmAllocation& c = rt.host(0).malloc("C", std::int64_t{M} * N * 4);
    fill_f16(a, M * K, a_val);
    fill_f16(b, K * N, b_val);
    const GmTensor A(a, 0, M, K, K, DType::F16), B(b, 0, K, N, N, DType::F16), C(c, 0, M, N, N, DType::F32);
    test::run_one_kernel(rt, CoreType::AIC, M / bm, [&](BlockCtx& blk) -> Task {
        Tile& aL1 = blk.alloc_tile(MemKind::L1, bm, bk, DType::F16, "aL1");
        Tile& bL1 = blk.alloc_tile(MemKind::L1, bk, bn, DType::F16, "bL1");
        Tile& aL0 = blk.alloc_tile(MemKind::L0A, bm, bk, DType::F16, "aL0");
        Tile& bL0 = blk.alloc_tile(MemKind::L0B, bk, bn, DType::F16, "bL0");
        Tile& acc = blk.alloc_tile(MemKind::L0C, bm, bn, DType::F32, "acc");
        const int row0 = blk.block_idx() * bm;
        for (int nj = 0; nj < N / bn; ++nj) {
            for (int kk = 0; kk < K / bk; ++kk) {
                co_await TLOAD(aL1, A.sub(row0, kk * bk, bm, bk));
                co_await TLOAD(bL1, B.sub(kk * bk, nj * bn, bk, bn));
                pipe_barrier(blk, PIPE_ALL);
                TEXTRACT(aL0, aL1, 0, 0);
                TEXTRACT(bL0, bL1, 0, 0);
                pipe_barrier(blk, PIPE_ALL);
                if (kk == 0) TMATMUL(acc, aL0, bL0);
                else TMATMUL_ACC(acc, aL0, bL0);
                pipe_barrier(blk, PIPE_ALL);
            }
            co_await TSTORE(C.sub(row0, nj * bn, bm, bn), acc);
            pipe_barrier(blk, PIPE_ALL);
        }
    });
    const std::vector<float> got = read_f32(c, 0, std::int64_t{M} * N);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += double(a_val(i * K + k)) * double(b_val(k * N + j));
            ASSERT_EQ(got[std::size_t(i) * N + j], float(s)) << "C(" << i << "," << j << ")";
        }
}

}  // namespace deferred_cube_test
}  // namespace tandem
