// The vector unit (sim/isa/isa_vector.cpp): each instruction's simulated time against the profile's
// formula worked out here, overlap with the MTE pipes, hazards, and the values in every dtype
// against an independent reference rounding (tests/support/float_ref.hpp), including fp16/bf16 ties.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/isa/isa.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/float_ref.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace isa_vector_test {

const Profile& profile() {
    static const Profile p = test::b1_profile();
    return p;
}

SimTime cyc(double n) { return cycles_to_ps(n, profile().chip.core_clock_mhz); }
SimTime issue_ps() { return cyc(profile().pipes.scalar_issue_cycles); }
// The vector formula, by hand: start-up plus one cycle per vector_bytes_per_cycle bytes or part.
SimTime vector_cost(std::int64_t bytes) {
    const auto& p = profile().pipes;
    return cyc(p.vector_startup_cycles + std::ceil(double(bytes) / p.vector_bytes_per_cycle));
}

std::vector<InstrRecord> of(const std::vector<InstrRecord>& log, Opcode op) {
    std::vector<InstrRecord> out;
    for (const InstrRecord& r : log)
        if (r.op == op) out.push_back(r);
    return out;
}

// ---- values in GM ----------------------------------------------------------------------------

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
    return t == DType::F16 ? test::round_f16(x) : t == DType::BF16 ? test::round_bf16(x) : test::round_f32(x);
}

// Deterministic values exactly representable in `t`, between about 1/16 and 32 in magnitude,
// with every mantissa bit in use (so sums and products hit ties and need rounding).
double value_in(DType t, std::uint32_t i, std::uint32_t salt) {
    std::uint32_t x = (i + 1) * 2654435761u ^ (salt * 40503u);
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    const double mant = 1.0 + double(x & 0xFFFFFu) / double(1u << 20);  // [1, 2)
    const int exp = int((x >> 20) % 10) - 4;
    const double v = std::ldexp(mant, exp) * ((x >> 31) ? -1.0 : 1.0);
    return round_in(t, v);
}

ClusterOptions functional_logged() { return ClusterOptions{1, DataMode::Functional, true}; }

// Runs `body` on one AIV block after loading `inputs` (rows x cols each, dtype per input) into UB
// tiles; `body` writes the tile `out` (dtype `out_t`), which is stored to GM and returned.
struct VecCase {
    int rows = 8, cols = 64;
    std::vector<DType> in_types;
    DType out_type = DType::F32;
    std::vector<std::function<double(std::int64_t)>> in_values;
    // (block, inputs, out)
    std::function<void(BlockCtx&, std::vector<Tile*>&, Tile&)> body;
    std::vector<int> in_rows, in_cols;  // defaults: rows x cols
};

std::vector<double> run_vec(const VecCase& c, DataMode mode = DataMode::Functional, std::vector<InstrRecord>* log = nullptr) {
    Runtime rt(profile(), ClusterOptions{1, mode, true});
    std::vector<GmAllocation*> ins;
    std::vector<GmTensor> in_t;
    for (std::size_t i = 0; i < c.in_types.size(); ++i) {
        const int r = i < c.in_rows.size() ? c.in_rows[i] : c.rows;
        const int k = i < c.in_cols.size() ? c.in_cols[i] : c.cols;
        GmAllocation& a = rt.host(0).malloc("in" + std::to_string(i), std::int64_t{r} * k * dtype_bytes(c.in_types[i]));
        if (mode == DataMode::Functional)
            for (std::int64_t e = 0; e < std::int64_t{r} * k; ++e) put(a, c.in_types[i], e, c.in_values[i](e));
        ins.push_back(&a);
        in_t.emplace_back(a, 0, r, k, k, c.in_types[i]);
    }
    GmAllocation& out = rt.host(0).malloc("out", std::int64_t{c.rows} * c.cols * dtype_bytes(c.out_type));
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        std::vector<Tile*> tiles;
        for (std::size_t i = 0; i < in_t.size(); ++i)
            tiles.push_back(&b.alloc_tile(MemKind::UB, in_t[i].rows(), in_t[i].cols(), c.in_types[i], "in" + std::to_string(i)));
        Tile& o = b.alloc_tile(MemKind::UB, c.rows, c.cols, c.out_type, "out");
        for (std::size_t i = 0; i < in_t.size(); ++i) co_await TLOAD(*tiles[i], in_t[i]);
        pipe_barrier(b, PIPE_ALL);
        c.body(b, tiles, o);
        pipe_barrier(b, PIPE_ALL);
        co_await TSTORE(GmTensor(out, 0, c.rows, c.cols, c.cols, c.out_type), o);
    });
    if (log != nullptr) *log = rt.cluster().event_log();
    std::vector<double> v;
    if (mode == DataMode::Functional)
        for (std::int64_t e = 0; e < std::int64_t{c.rows} * c.cols; ++e) v.push_back(get(out, c.out_type, e));
    return v;
}

// Compares bit for bit (as doubles: every element is exactly a double), NaN-free data.
void expect_values(const std::vector<double>& got, const std::function<double(std::int64_t)>& want, const char* what) {
    int bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double w = want(static_cast<std::int64_t>(i));
        if (got[i] != w && ++bad <= 5) ADD_FAILURE() << what << " element " << i << ": got " << got[i] << ", want " << w;
    }
    EXPECT_EQ(bad, 0) << what;
}

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};

// ============================================================ costs and overlap =============

TEST(VectorCost, EachInstructionCostsStartupPlusRepeatsOfItsWidestOperand) {
    const auto& p = profile().pipes;
    ASSERT_GT(p.vector_bytes_per_cycle, 0);
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, true});
    const SimTime k0 = from_us(profile().host.launch_to_start_us);
    auto run = test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& h1 = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "h1");    // 32 KiB
        Tile& h2 = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "h2");
        Tile& f1 = b.alloc_tile(MemKind::UB, 64, 256, DType::F32, "f1");    // 64 KiB
        Tile& odd = b.alloc_tile(MemKind::UB, 3, 5, DType::BF16, "odd");    // 30 bytes: one partial repeat
        Tile& row = b.alloc_tile(MemKind::UB, 1, 256, DType::F16, "row");
        TADD(h1, h1, h2);          // one after another on PIPE_V
        TADDS(h2, h2, 1.5f);
        TMULS(h1, h1, 0.5f);
        TCVT(f1, h1);              // counted by the wider (fp32) side
        TMOV(h2, h1);
        TADD_ROWVEC(h1, h1, row);
        TADDS(odd, odd, 1.0f);
        co_return;
    });
    const auto log = rt.cluster().event_log();
    struct Want {
        Opcode op;
        std::int64_t bytes;
    };
    const Want want[] = {{Opcode::TADD, 32768}, {Opcode::TADDS, 32768}, {Opcode::TMULS, 32768}, {Opcode::TCVT, 65536},
                         {Opcode::TMOV, 32768}, {Opcode::TADD_ROWVEC, 32768}, {Opcode::TADDS, 30}};
    std::vector<InstrRecord> vec;
    for (const InstrRecord& r : log)
        if (r.pipe == Pipe::V) vec.push_back(r);
    ASSERT_EQ(vec.size(), std::size(want));
    SimTime t = k0 + issue_ps();
    for (std::size_t i = 0; i < vec.size(); ++i) {
        EXPECT_EQ(vec[i].op, want[i].op) << i;
        EXPECT_EQ(vec[i].bytes, want[i].bytes) << i;
        EXPECT_EQ(vec[i].start, t) << i;  // back to back: the pipe is the bottleneck, not the scalar
        EXPECT_EQ(vec[i].end - vec[i].start, vector_cost(want[i].bytes)) << opcode_name(want[i].op);
        t = vec[i].end;
    }
    // 30 bytes is one repeat; 32 KiB is 128 of them with the shipped 256 bytes per cycle.
    EXPECT_EQ(vec.back().end - vec.back().start, cyc(p.vector_startup_cycles + 1));
    EXPECT_EQ(run.stats.end, vec.back().end);
    EXPECT_EQ(run.stats.busy_ps[pipe_index(Pipe::V)], t - (k0 + issue_ps()));
}

TEST(VectorCost, VectorOverlapsLoadsAndStoresOfOtherTiles) {
    const auto& p = profile().pipes;
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation& x = rt.host(0).malloc("X", 64 * 256 * 2);
    const SimTime k0 = from_us(profile().host.launch_to_start_us);
    auto run = test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& in = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "in");
        Tile& work = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "work");
        Tile& out = b.alloc_tile(MemKind::UB, 64, 256, DType::F16, "out");
        co_await TLOAD(in, GmTensor(x, 0, 64, 256, 256, DType::F16));  // MTE2
        TADDS(work, work, 2.0f);                                        // PIPE_V, meanwhile
        co_await TSTORE(GmTensor(x, 0, 64, 256, 256, DType::F16), out); // MTE3, meanwhile
    });
    const auto log = rt.cluster().event_log();
    const auto load = of(log, Opcode::TLOAD).at(0);
    const auto add = of(log, Opcode::TADDS).at(0);
    const auto store = of(log, Opcode::TSTORE).at(0);
    EXPECT_EQ(load.start, k0 + issue_ps());
    EXPECT_EQ(add.start, k0 + 2 * issue_ps());
    EXPECT_EQ(store.start, k0 + 3 * issue_ps());
    EXPECT_LT(add.start, load.end);
    EXPECT_EQ(add.end - add.start, cyc(p.vector_startup_cycles + 32768 / p.vector_bytes_per_cycle));
    EXPECT_EQ(run.stats.end, std::max({load.end, add.end, store.end}));
}

TEST(VectorCost, ReadingATileBeforeItsLoadEndsIsAHazardNamingBoth) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& x = rt.host(0).malloc("X", 16 * 256 * 2);
    try {
        test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& in = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "in");
            Tile& out = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "out");
            co_await TLOAD(in, GmTensor(x, 0, 16, 256, 256, DType::F16));
            TADD(out, in, in);  // no set_flag(MTE2 -> V) / wait_flag
        });
        ADD_FAILURE() << "expected a hazard";
    } catch (const SimError& e) {
        const std::string msg = e.what();
        for (const char* part : {"hazard: TADD", "tile 'in'", "before the TLOAD", "block 0 on AIV core 0"})
            EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
}

TEST(VectorCost, OverwritingATileWhileAStoreReadsItIsAHazard) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, false});
    GmAllocation& x = rt.host(0).malloc("X", 16 * 256 * 2);
    try {
        test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
            Tile& t = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "t");
            co_await TSTORE(GmTensor(x, 0, 16, 256, 256, DType::F16), t);
            TMULS(t, t, 2.0f);  // MTE3 still reads t
        });
        ADD_FAILURE() << "expected a hazard";
    } catch (const SimError& e) {
        const std::string msg = e.what();
        for (const char* part : {"hazard: TMULS overwrites tile 't'", "while an earlier read"})
            EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
}

TEST(VectorCost, FlagsMakeTheHazardGoAway) {
    Runtime rt(profile(), ClusterOptions{1, DataMode::Functional, true});
    GmAllocation& x = rt.host(0).malloc("X", 16 * 256 * 2);
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& in = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "in");
        Tile& out = b.alloc_tile(MemKind::UB, 16, 256, DType::F16, "out");
        co_await TLOAD(in, GmTensor(x, 0, 16, 256, 256, DType::F16));
        set_flag(b, PIPE_MTE2, PIPE_V, 0);
        wait_flag(b, PIPE_MTE2, PIPE_V, 0);
        TADD(out, in, in);
        set_flag(b, PIPE_V, PIPE_MTE3, 0);
        wait_flag(b, PIPE_V, PIPE_MTE3, 0);
        co_await TSTORE(GmTensor(x, 0, 16, 256, 256, DType::F16), out);
    });
    const auto log = rt.cluster().event_log();
    const auto load = of(log, Opcode::TLOAD).at(0);
    const auto add = of(log, Opcode::TADD).at(0);
    const auto store = of(log, Opcode::TSTORE).at(0);
    const SimTime flag = cyc(profile().pipes.set_flag_cycles) + cyc(profile().pipes.wait_flag_cycles);
    EXPECT_EQ(add.start, load.end + flag);
    EXPECT_EQ(store.start, add.end + flag);
}

TEST(VectorCost, WrongOperandsAreRejectedInEveryMode) {
    for (DataMode mode : {DataMode::Functional, DataMode::TimingOnly}) {
        Runtime rt(profile(), ClusterOptions{1, mode, false});
        try {
            test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
                Tile& a = b.alloc_tile(MemKind::UB, 16, 64, DType::F16, "a");
                Tile& c = b.alloc_tile(MemKind::UB, 16, 32, DType::F16, "c");
                TADD(c, a, a);
                co_return;
            });
            ADD_FAILURE() << "expected a shape error";
        } catch (const SimError& e) {
            EXPECT_NE(std::string(e.what()).find("TADD: tile 'c' is 16x32 but tile 'a' is 16x64"), std::string::npos) << e.what();
        }
    }
    Runtime rt(profile(), ClusterOptions{1, DataMode::TimingOnly, false});
    try {
        test::run_one_kernel(rt, CoreType::AIC, 1, [&](BlockCtx& b) -> Task {
            Tile& a = b.alloc_tile(MemKind::L0C, 16, 64, DType::F32, "acc");
            TADDS(a, a, 1.0f);
            co_return;
        });
        ADD_FAILURE() << "expected a core-type error";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("TADDS needs the VECTOR pipe"), std::string::npos) << e.what();
    }
}

// ============================================================ values ========================

TEST(VectorValues, TaddRoundsEachSumToTheTileDtype) {
    for (DType t : kFloatTypes) {
        VecCase c;
        c.in_types = {t, t};
        c.out_type = t;
        c.in_values = {[t](std::int64_t i) { return value_in(t, std::uint32_t(i), 1); },
                       [t](std::int64_t i) { return value_in(t, std::uint32_t(i), 2); }};
        c.body = [](BlockCtx&, std::vector<Tile*>& in, Tile& out) { TADD(out, *in[0], *in[1]); };
        const auto got = run_vec(c);
        expect_values(got, [&](std::int64_t i) { return round_in(t, c.in_values[0](i) + c.in_values[1](i)); }, dtype_name(t));
    }
}

TEST(VectorValues, Fp16AndBf16TiesRoundToEven) {
    // 1 + 2^-11 is half an fp16 ulp above 1: a tie, to the even 1. 1 + 3 * 2^-11 is a tie between
    // 1 + 2^-10 (odd) and 1 + 2^-9 (even). Likewise in bf16 with 2^-8.
    struct Tie {
        DType t;
        double a, b, want;
    };
    const Tie ties[] = {{DType::F16, 1.0, std::ldexp(1.0, -11), 1.0},
                        {DType::F16, 1.0 + std::ldexp(1.0, -10), std::ldexp(1.0, -11), 1.0 + std::ldexp(1.0, -9)},
                        {DType::BF16, 1.0, std::ldexp(1.0, -8), 1.0},
                        {DType::BF16, 1.0 + std::ldexp(1.0, -7), std::ldexp(1.0, -8), 1.0 + std::ldexp(1.0, -6)},
                        {DType::F16, 65504.0, 16.0, INFINITY}};  // past the largest fp16 by half an ulp: inf
    for (const Tie& tie : ties) {
        VecCase c;
        c.rows = 1;
        c.cols = 16;
        c.in_types = {tie.t, tie.t};
        c.out_type = tie.t;
        c.in_values = {[&](std::int64_t) { return tie.a; }, [&](std::int64_t) { return tie.b; }};
        c.body = [](BlockCtx&, std::vector<Tile*>& in, Tile& out) { TADD(out, *in[0], *in[1]); };
        const auto got = run_vec(c);
        EXPECT_EQ(got.at(0), tie.want) << dtype_name(tie.t) << " " << tie.a << " + " << tie.b;
    }
}

TEST(VectorValues, ScalarOpsRoundTheScalarToTheDtypeFirst) {
    for (DType t : kFloatTypes) {
        const float s = 1.0f / 3.0f;  // not representable in any of them
        const double s_t = round_in(t, s);
        VecCase c;
        c.in_types = {t};
        c.out_type = t;
        c.in_values = {[t](std::int64_t i) { return value_in(t, std::uint32_t(i), 3); }};
        c.body = [s](BlockCtx& b, std::vector<Tile*>& in, Tile& out) {
            TMULS(out, *in[0], s);
            pipe_barrier(b, PIPE_V);
            TADDS(out, out, s);
        };
        const auto got = run_vec(c);
        expect_values(got, [&](std::int64_t i) { return round_in(t, round_in(t, c.in_values[0](i) * s_t) + s_t); }, dtype_name(t));
    }
}

TEST(VectorValues, TcvtConvertsBetweenEveryPairWithRoundToNearestEven) {
    for (DType from : kFloatTypes) {
        for (DType to : kFloatTypes) {
            VecCase c;
            c.in_types = {from};
            c.out_type = to;
            // fp32 sources with bits below every 16-bit format's precision, including exact ties.
            c.in_values = {[from](std::int64_t i) {
                if (from != DType::F32) return value_in(from, std::uint32_t(i), 4);
                if (i % 4 == 0) return 1.0 + std::ldexp(1.0, -11) * double(1 + 2 * (i % 8));  // fp16 ties
                if (i % 4 == 1) return 1.0 + std::ldexp(1.0, -8) * double(1 + 2 * (i % 8));   // bf16 ties
                return value_in(DType::F32, std::uint32_t(i), 4);
            }};
            c.body = [](BlockCtx&, std::vector<Tile*>& in, Tile& out) { TCVT(out, *in[0]); };
            const auto got = run_vec(c);
            expect_values(got, [&](std::int64_t i) { return round_in(to, c.in_values[0](i)); },
                          (std::string(dtype_name(from)) + " -> " + dtype_name(to)).c_str());
        }
    }
}

TEST(VectorValues, TmovCopiesAndRowAndColumnVectorsBroadcast) {
    for (DType t : kFloatTypes) {
        const int rows = 8, cols = 64;
        VecCase c;
        c.rows = rows;
        c.cols = cols;
        c.in_types = {t, t, t};
        c.in_rows = {rows, 1, rows};
        c.in_cols = {cols, cols, 1};
        c.out_type = t;
        c.in_values = {[t](std::int64_t i) { return value_in(t, std::uint32_t(i), 5); },
                       [t](std::int64_t i) { return value_in(t, std::uint32_t(i), 6); },
                       [t](std::int64_t i) { return value_in(t, std::uint32_t(i), 7); }};
        // out = (src + rowvec) + colvec, through a TMOV copy.
        c.body = [&](BlockCtx& b, std::vector<Tile*>& in, Tile& out) {
            Tile& tmp = b.alloc_tile(MemKind::UB, rows, cols, t, "tmp");
            TMOV(tmp, *in[0]);
            pipe_barrier(b, PIPE_V);
            TADD_ROWVEC(tmp, tmp, *in[1]);
            pipe_barrier(b, PIPE_V);
            TADD_COLVEC(out, tmp, *in[2]);
        };
        const auto got = run_vec(c);
        expect_values(got, [&](std::int64_t i) {
            const std::int64_t r = i / cols, col = i % cols;
            return round_in(t, round_in(t, c.in_values[0](i) + c.in_values[1](col)) + c.in_values[2](r));
        }, dtype_name(t));
    }
}

// A tile loaded from a column-major (DN) tensor is stored column by column in UB; element-wise
// operations with a row-major tile still pair elements by (row, column).
TEST(VectorValues, ColumnMajorTilesPairByRowAndColumn) {
    const int rows = 8, cols = 16;
    Runtime rt(profile(), functional_logged());
    GmAllocation& a = rt.host(0).malloc("A", rows * cols * 4);   // row-major
    GmAllocation& bt = rt.host(0).malloc("Bt", rows * cols * 4); // B stored transposed (DN)
    GmAllocation& out = rt.host(0).malloc("out", rows * cols * 4);
    GmAllocation& out2 = rt.host(0).malloc("out2", rows * cols * 4);
    auto av = [](int r, int c) { return double(r * 100 + c); };
    auto bv = [](int r, int c) { return double(r * 7 - c * 3); };
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            put(a, DType::F32, r * cols + c, av(r, c));
            put(bt, DType::F32, c * rows + r, bv(r, c));  // column c is contiguous
        }
    test::run_one_kernel(rt, CoreType::AIV, 1, [&](BlockCtx& b) -> Task {
        Tile& ta = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "a");
        Tile& tb = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "b");
        Tile& to = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "o");
        Tile& to2 = b.alloc_tile(MemKind::UB, rows, cols, DType::F32, "o2");
        Tile& vec = b.alloc_tile(MemKind::UB, 1, cols, DType::F32, "vec");
        co_await TLOAD(ta, GmTensor(a, 0, rows, cols, cols, DType::F32));
        co_await TLOAD(tb, GmTensor(bt, 0, rows, cols, rows, DType::F32, Layout::DN));
        co_await TLOAD(vec, GmTensor(a, 0, 1, cols, cols, DType::F32));  // row 0 of A
        pipe_barrier(b, PIPE_ALL);
        TADD(to, ta, tb);
        TADD_ROWVEC(to2, tb, vec);
        pipe_barrier(b, PIPE_ALL);
        co_await TSTORE(GmTensor(out, 0, rows, cols, cols, DType::F32), to);
        co_await TSTORE(GmTensor(out2, 0, rows, cols, cols, DType::F32), to2);
    });
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            EXPECT_EQ(get(out, DType::F32, r * cols + c), av(r, c) + bv(r, c)) << r << "," << c;
            EXPECT_EQ(get(out2, DType::F32, r * cols + c), bv(r, c) + av(0, c)) << r << "," << c;
        }
}

// ============================================================ modes =========================

TEST(VectorModes, FunctionalAndTimingOnlyGiveTheSameTimes) {
    VecCase c;
    c.in_types = {DType::F16, DType::F16, DType::F16};
    c.in_rows = {8, 1, 8};
    c.in_cols = {64, 64, 1};
    c.out_type = DType::F32;
    c.in_values = {[](std::int64_t i) { return double(i % 9); }, [](std::int64_t i) { return double(i % 5); },
                   [](std::int64_t i) { return double(i % 3); }};
    c.body = [](BlockCtx& b, std::vector<Tile*>& in, Tile& out) {
        Tile& h = b.alloc_tile(MemKind::UB, 8, 64, DType::F16, "h");
        TADD(h, *in[0], *in[0]);
        TADDS(h, h, 1.0f);
        TMULS(h, h, 3.0f);
        TMOV(*in[0], h);
        TADD_ROWVEC(h, *in[0], *in[1]);
        TADD_COLVEC(h, h, *in[2]);
        TCVT(out, h);
    };
    std::vector<InstrRecord> functional, timing;
    run_vec(c, DataMode::Functional, &functional);
    run_vec(c, DataMode::TimingOnly, &timing);
    ASSERT_EQ(functional.size(), timing.size());
    for (std::size_t i = 0; i < functional.size(); ++i)
        EXPECT_EQ(format_record(functional[i]), format_record(timing[i])) << i;
}

}  // namespace isa_vector_test
}  // namespace tandem
