// The ISA moe_ffn added: int8 x int8 -> int32 on the cube (exact, at cube_int8_cost_factor of the
// fp16 cost), TSTORE_FP (the fixpipe's per-column dequant of an int32 accumulator), and the
// vector unit's TEXP, TDIV, TMUL, TABS, TROWMAX, TROWEXPANDMUL, TCVT to int8 (rint, saturating)
// and TSORT (stable, descending, with its pass count), TMRGSORT (one pass); and the tile scopes
// the MoE kernels re-use UB with (BlockCtx::tile_mark / free_tiles_since).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_int8_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

SimTime cyc(double n) { return cycles_to_ps(n, profile().chip.core_clock_mhz); }

constexpr int kM = 32, kK = 128, kN = 64;

std::int8_t a_val(int i) { return static_cast<std::int8_t>((i * 37 + 11) % 255 - 127); }
std::int8_t b_val(int i) { return static_cast<std::int8_t>((i * 53 + 5) % 251 - 125); }

TEST(CubeInt8, ExactInt32SumsAndTheFixpipeDequant) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation& a = rt.host(0).malloc("A", kM * kK);
    GmAllocation& b = rt.host(0).malloc("B", kK * kN);
    GmAllocation& s = rt.host(0).malloc("S", kN * 4);
    GmAllocation& c = rt.host(0).malloc("C", kM * kN * 2);
    for (int i = 0; i < kM * kK; ++i) a.data.data()[i] = static_cast<std::byte>(a_val(i));
    for (int i = 0; i < kK * kN; ++i) b.data.data()[i] = static_cast<std::byte>(b_val(i));
    std::vector<float> scale(kN);
    for (int j = 0; j < kN; ++j) scale[j] = 1.0f / 1024.0f * float(1 + j % 5);
    std::memcpy(s.data.data(), scale.data(), kN * 4);
    test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& blk) -> Task {
        Tile& aL1 = blk.alloc_tile(MemKind::L1, kM, kK, DType::I8, "aL1");
        Tile& bL1 = blk.alloc_tile(MemKind::L1, kK, kN, DType::I8, "bL1");
        Tile& sL1 = blk.alloc_tile(MemKind::L1, 1, kN, DType::F32, "sL1");
        Tile& aL0 = blk.alloc_tile(MemKind::L0A, kM, kK / 2, DType::I8, "aL0");
        Tile& bL0 = blk.alloc_tile(MemKind::L0B, kK / 2, kN, DType::I8, "bL0");
        Tile& acc = blk.alloc_tile(MemKind::L0C, kM, kN, DType::I32, "acc");
        co_await TLOAD(aL1, GmTensor(a, 0, kM, kK, kK, DType::I8));
        co_await TLOAD(bL1, GmTensor(b, 0, kK, kN, kN, DType::I8));
        co_await TLOAD(sL1, GmTensor(s, 0, 1, kN, kN, DType::F32));
        pipe_barrier(blk, PIPE_ALL);
        for (int k = 0; k < 2; ++k) {
            TEXTRACT(aL0, aL1, 0, k * kK / 2);
            TEXTRACT(bL0, bL1, k * kK / 2, 0);
            pipe_barrier(blk, PIPE_ALL);
            if (k == 0) TMATMUL(acc, aL0, bL0);
            else TMATMUL_ACC(acc, aL0, bL0);
            pipe_barrier(blk, PIPE_ALL);
        }
        co_await TSTORE_FP(GmTensor(c, 0, kM, kN, kN, DType::F16), acc, sL1);
    });
    for (int i = 0; i < kM; ++i) {
        for (int j = 0; j < kN; ++j) {
            std::int32_t sum = 0;
            for (int k = 0; k < kK; ++k) sum += std::int32_t{a_val(i * kK + k)} * b_val(k * kN + j);
            std::uint16_t h;
            std::memcpy(&h, c.data.data() + (i * kN + j) * 2, 2);
            ASSERT_EQ(h, float_to_half(float(sum) * scale[j])) << i << "," << j;
        }
    }
    int matmuls = 0;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op != Opcode::TMATMUL && r.op != Opcode::TMATMUL_ACC) continue;
        ++matmuls;
        const auto& p = profile().pipes;
        const double fractals = std::ceil(double(kM) / p.cube_fractal) * std::ceil(double(kK / 2) / p.cube_fractal) *
                                std::ceil(double(kN) / p.cube_fractal);
        EXPECT_EQ(r.end - r.start, cyc(p.cube_fixed_cycles + fractals * p.cube_int8_cost_factor / p.cube_efficiency));
    }
    EXPECT_EQ(matmuls, 2);
    EXPECT_EQ(profile().pipes.cube_int8_cost_factor, 0.5) << "int8 at twice the fp16 rate";
}

TEST(VectorMoe, SwigluQuantAndSortComputeWhatTheyName) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    constexpr int kRows = 2, kCols = 64;
    std::vector<float> got_q, got_max, got_y, got_keys, got_idx;
    std::vector<float> x(kRows * kCols), u(kRows * kCols);
    for (int i = 0; i < kRows * kCols; ++i) {
        x[i] = std::sin(0.3f * float(i)) * 4.0f;
        u[i] = std::cos(0.2f * float(i)) * 3.0f;
    }
    std::vector<float> keys(100);
    for (int i = 0; i < 100; ++i) keys[i] = -float((i * 7) % 13);
    int sort_passes = 0;
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
        Tile& g = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "g");
        Tile& up = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "u");
        Tile& t = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "t");
        Tile& mx = blk.alloc_tile(MemKind::UB, kRows, 1, DType::F32, "mx");
        Tile& inv = blk.alloc_tile(MemKind::UB, kRows, 1, DType::F32, "inv");
        Tile& q = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::I8, "q");
        Tile& qf = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F32, "qf");
        Tile& k = blk.alloc_tile(MemKind::UB, 1, 100, DType::F32, "keys");
        Tile& idx = blk.alloc_tile(MemKind::UB, 1, 100, DType::F32, "idx");
        std::memcpy(g.data, x.data(), x.size() * 4);
        std::memcpy(up.data, u.data(), u.size() * 4);
        std::memcpy(k.data, keys.data(), keys.size() * 4);
        TMULS(t, g, -1.0f);
        TEXP(t, t);
        TADDS(t, t, 1.0f);
        TDIV(t, g, t);
        TMUL(up, t, up);  // y = silu(g) * u
        TABS(t, up);
        TROWMAX(mx, t);
        pipe_barrier(blk, PIPE_ALL);
        for (int r = 0; r < kRows; ++r) inv.as<float>()[r] = 127.0f / mx.as<float>()[r];
        TROWEXPANDMUL(t, up, inv);
        TCVT(q, t);
        TCVT(qf, q);
        TSORT(k, idx);
        pipe_barrier(blk, PIPE_ALL);
        got_y.assign(up.as<float>(), up.as<float>() + kRows * kCols);
        got_max.assign(mx.as<float>(), mx.as<float>() + kRows);
        got_q.assign(qf.as<float>(), qf.as<float>() + kRows * kCols);
        got_keys.assign(k.as<float>(), k.as<float>() + 100);
        got_idx.assign(idx.as<float>(), idx.as<float>() + 100);
        co_return;
    });
    for (int r = 0; r < kRows; ++r) {
        float m = 0;
        for (int c = 0; c < kCols; ++c) {
            const int i = r * kCols + c;
            const float gi = x[i];
            const float y = (gi / (std::exp(gi * -1.0f) + 1.0f)) * u[i];
            ASSERT_EQ(got_y[i], y) << i;
            m = std::max(m, std::fabs(y));
        }
        ASSERT_EQ(got_max[r], m);
        for (int c = 0; c < kCols; ++c) {
            const int i = r * kCols + c;
            ASSERT_EQ(got_q[i], std::nearbyint(got_y[i] * (127.0f / m))) << i;
            ASSERT_LE(std::fabs(got_q[i]), 127.0f);
        }
    }
    // Stable descending: equal keys keep their original order.
    for (int i = 1; i < 100; ++i) {
        ASSERT_GE(got_keys[i - 1], got_keys[i]);
        if (got_keys[i - 1] == got_keys[i]) {
            ASSERT_LT(got_idx[i - 1], got_idx[i]);
        }
        ASSERT_EQ(keys[static_cast<std::size_t>(got_idx[i])], got_keys[i]);
    }
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op != Opcode::TSORT) continue;
        // 100 keys: 4 blocks of 32, one 4-way merge round: 2 passes of the sort unit over 100
        // elements, each vector_sort_cycles_per_element (not a 256-byte repeat per cycle).
        const auto& p = profile().pipes;
        ASSERT_GT(p.vector_sort_cycles_per_element, 0.0);
        EXPECT_EQ(r.end - r.start, 2 * cyc(p.vector_startup_cycles + std::ceil(100.0 * p.vector_sort_cycles_per_element)));
        ++sort_passes;
    }
    EXPECT_EQ(sort_passes, 1);
}

TEST(VectorMoe, CastToInt8RoundsToNearestEvenAndSaturates) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    const std::vector<float> in{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 126.6f, 300.0f, -300.0f};
    std::vector<std::int8_t> out(in.size());
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
        Tile& f = blk.alloc_tile(MemKind::UB, 1, 8, DType::F32, "f");
        Tile& q = blk.alloc_tile(MemKind::UB, 1, 8, DType::I8, "q");
        std::memcpy(f.data, in.data(), 32);
        TCVT(q, f);
        pipe_barrier(blk, PIPE_ALL);
        std::memcpy(out.data(), q.data, 8);
        co_return;
    });
    EXPECT_EQ(out, (std::vector<std::int8_t>{0, 2, 2, 0, -2, 127, 127, -128}));
}

TEST(VectorMoe, MergeSortIsOnePassAndSortsStably) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    std::vector<float> keys_out, idx_out;
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
        Tile& k = blk.alloc_tile(MemKind::UB, 1, 100, DType::F32, "keys");
        Tile& idx = blk.alloc_tile(MemKind::UB, 1, 100, DType::F32, "idx");
        for (int i = 0; i < 100; ++i) k.as<float>()[i] = -static_cast<float>(i % 4 * 25 + i / 4);  // four sorted runs
        TMRGSORT(k, idx);
        pipe_barrier(blk, PIPE_ALL);
        keys_out.assign(k.as<float>(), k.as<float>() + 100);
        idx_out.assign(idx.as<float>(), idx.as<float>() + 100);
        co_return;
    });
    for (int i = 0; i < 100; ++i) EXPECT_EQ(keys_out[static_cast<std::size_t>(i)], -static_cast<float>(i)) << i;
    EXPECT_EQ(idx_out[1], 4.0f);  // key -1 was at position 4
    int merges = 0;
    for (const InstrRecord& r : rt.cluster().event_log()) {
        if (r.op != Opcode::TMRGSORT) continue;
        ++merges;
        // One pass of the sort unit over the 100 records.
        const auto& p = profile().pipes;
        EXPECT_EQ(r.end - r.start, cyc(p.vector_startup_cycles + std::ceil(100.0 * p.vector_sort_cycles_per_element)));
    }
    EXPECT_EQ(merges, 1);
}

TEST(TileScope, FreedTilesAreReusedAfterTheirLastAccess) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    std::int64_t first_offset = -1, again_offset = -2;
    SimTime freed_end = 0, again_write_end = 0;
    std::string bad_mark;
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& blk) -> Task {
        const std::size_t mark = blk.tile_mark();
        Tile& a = blk.alloc_tile(MemKind::UB, 1, 4096, DType::F32, "a");
        Tile& b = blk.alloc_tile(MemKind::UB, 1, 4096, DType::F32, "b");
        TADD(b, a, a);  // b is written, a read, on the vector pipe
        first_offset = a.offset_bytes;
        freed_end = std::max({a.read_end, b.write_end});
        blk.free_tiles_since(mark);
        Tile& c = blk.alloc_tile(MemKind::UB, 1, 4096, DType::F32, "c");
        again_offset = c.offset_bytes;
        again_write_end = c.write_end;
        try {
            blk.free_tiles_since(mark + 5);
        } catch (const SimError& e) {
            bad_mark = e.what();
        }
        pipe_barrier(blk, PIPE_ALL);
        co_return;
    });
    EXPECT_EQ(again_offset, first_offset);  // the same UB bytes again
    EXPECT_GT(freed_end, 0);
    EXPECT_EQ(again_write_end, freed_end);  // the new tile's first access waits for the freed ones'
    EXPECT_NE(bad_mark.find("free_tiles_since"), std::string::npos) << bad_mark;
}

}  // namespace isa_int8_test
}  // namespace tandem
