#include "host/run/op_inputs.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "host/run/input_gen.hpp"
#include "host/run/parallel_bands.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/mem/fp16_widen.hpp"
#include "sim/mem/zeroed_buffer.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

using kernels::OpParams;
using kernels::Sharding;
using kernels::Split;

// The streams of input_gen.hpp (kStreamA, kStreamB), and one for the bias ("CCCCCCCC").
constexpr std::uint64_t kStreamBias = 0x4343434343434343ULL;

// An input element's bits: int8 (the low byte, two's complement), fp16/bf16 (the low 2 bytes) or
// fp32.
std::uint32_t element_bits(DType t, float f) {
    if (t == DType::I8) return static_cast<std::uint8_t>(static_cast<std::int8_t>(f));
    if (dtype_bytes(t) == 2) return float_to_bits(t, f);
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

// The values an output of fp32 gets (the seed's 1..4) or of fp16/bf16 (-1, 0, 1), as elements of
// the inputs' dtype.
struct ValueTable {
    std::array<std::uint32_t, 4> bits{};
    int esize = 2;
    bool is_signed = false;
    ValueTable(DType t, bool signed_values) : esize(dtype_bytes(t)), is_signed(signed_values) {
        for (std::size_t v = 0; v < bits.size(); ++v) {
            bits[v] = element_bits(t, signed_values ? static_cast<float>(static_cast<int>(v) - 1) : static_cast<float>(1 + v));
        }
    }
    // The values of n generator outputs: (z >> 32) % 3 of the signed ones, z >> 62 of 1..4.
    template <class Element>
    void map_as(const std::uint64_t* z, Element* out, int n) const {
        if (is_signed) {
            for (int i = 0; i < n; ++i) out[i] = static_cast<Element>(bits[(z[i] >> 32) % 3]);
        } else {
            for (int i = 0; i < n; ++i) out[i] = static_cast<Element>(bits[z[i] >> 62]);
        }
    }
    void map(const std::uint64_t* z, std::byte* out, int n) const {
        if (esize == 4) map_as(z, reinterpret_cast<std::uint32_t*>(out), n);
        else if (esize == 1) map_as(z, reinterpret_cast<std::uint8_t*>(out), n);
        else map_as(z, reinterpret_cast<std::uint16_t*>(out), n);
    }
};

// A rows x cols cut of the stream's global matrix (row stride `global_cols`) at (row0, col0),
// written into `dst` (rows `dst.ld` elements apart).
void cut_into(std::uint64_t stream, int global_cols, int row0, int col0, int rows, int cols, const ValueTable& values,
              MatrixDest dst, int threads) {
    const std::int64_t min_rows = std::max<std::int64_t>(1, kMinBandElements / std::max(1, cols));
    const std::int64_t es = values.esize;
    for_each_band(rows, min_rows, threads, [&](std::int64_t r0, std::int64_t r1) {
        std::array<std::uint64_t, kSplitmixChunk> z{};
        for (std::int64_t r = r0; r < r1; ++r) {
            const std::uint64_t first = static_cast<std::uint64_t>(row0 + r) * static_cast<std::uint64_t>(global_cols) +
                                        static_cast<std::uint64_t>(col0);
            std::byte* out = dst.data + r * dst.ld * es;
            for (int c0 = 0; c0 < cols; c0 += static_cast<int>(kSplitmixChunk)) {
                const int n = std::min(cols - c0, static_cast<int>(kSplitmixChunk));
                splitmix64_run(stream, first + static_cast<std::uint64_t>(c0), z.data(), static_cast<std::size_t>(n));
                values.map(z.data(), out + c0 * es, n);
            }
        }
    });
}

HostMatrix cut(std::uint64_t stream, int global_cols, int row0, int col0, int rows, int cols, const ValueTable& values) {
    HostMatrix m;
    m.rows = rows;
    m.cols = cols;
    m.esize = values.esize;
    m.bytes.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * static_cast<std::size_t>(m.esize));
    cut_into(stream, global_cols, row0, col0, rows, cols, values, MatrixDest{m.bytes.data(), cols}, 1);  // the bias: small
    return m;
}

// Rows [r0, r0 + rows) of `m` widened to fp32, packed (cols floats per row) into `dst`.
void widen_rows(DType t, const HostMatrix& m, std::int64_t r0, std::int64_t rows, float* dst) {
    if (m.ld() == m.cols) {
        widen_elements(t, m.row(r0), dst, static_cast<std::size_t>(rows * m.cols));
        return;
    }
    for (std::int64_t r = 0; r < rows; ++r) widen_elements(t, m.row(r0 + r), dst + r * m.cols, static_cast<std::size_t>(m.cols));
}

}  // namespace

float bits_to_float(DType t, std::uint16_t bits) {
    if (t == DType::F16) return half_to_float(bits);
    // bf16: the upper half of an fp32.
    const std::uint32_t x = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

std::uint16_t float_to_bits(DType t, float f) {
    if (t == DType::F16) return float_to_half(f);
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // nan stays nan
    x += 0x7FFFu + ((x >> 16) & 1u);  // round to nearest even
    return static_cast<std::uint16_t>(x >> 16);
}

void widen_bits(DType t, const std::uint16_t* src, float* dst, std::size_t count) {
    if (t == DType::F16) {
        widen_halves(src, dst, count);
        return;
    }
    for (std::size_t i = 0; i < count; ++i) dst[i] = bits_to_float(t, src[i]);
}

void widen_elements(DType t, const std::byte* src, float* dst, std::size_t count) {
    if (t == DType::F32) {
        std::memcpy(dst, src, count * sizeof(float));
        return;
    }
    if (t == DType::I8) {
        for (std::size_t i = 0; i < count; ++i) dst[i] = static_cast<float>(static_cast<std::int8_t>(src[i]));
        return;
    }
    widen_bits(t, reinterpret_cast<const std::uint16_t*>(src), dst, count);
}

HostMatrix matrix_of_halves(int rows, int cols, const std::vector<std::uint16_t>& bits) {
    HostMatrix m;
    m.rows = rows;
    m.cols = cols;
    m.esize = 2;
    m.bytes.resize(bits.size() * sizeof(std::uint16_t));
    std::memcpy(m.bytes.data(), bits.data(), m.bytes.size());
    return m;
}

std::vector<std::uint16_t> halves_of(const HostMatrix& m) {
    if (m.esize != 2) throw SimError(fmt::format("internal: halves_of a matrix of {}-byte elements", m.esize));
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols));
    for (int r = 0; r < m.rows; ++r)
        std::memcpy(bits.data() + static_cast<std::size_t>(r) * m.cols, m.row(r), static_cast<std::size_t>(m.cols) * 2);
    return bits;
}

bool signed_inputs(const OpParams& p) { return p.out_dtype != DType::F32; }

namespace {
// Where make_op_inputs cuts rank r's A_r and B_r^T from the global A and B^T.
struct Cuts {
    ShardShapes sh;
    ValueTable values;
    bool shared_b = false;
    int bt_cols = 0;  // the global B^T's row length: K_total, or k when every rank holds one B
    Cuts(const Sharding& s, const OpParams& p)
        : sh(shard_shapes(s, p)), values(p.dtype, signed_inputs(p)), shared_b(s.b == Split::Replicated),
          bt_cols(shared_b && s.k_per_rank ? p.k : sh.k_total) {}
};
}  // namespace

void generate_a(const Sharding& s, const OpParams& p, int rank, MatrixDest dst, int host_threads) {
    const Cuts c(s, p);
    const int row0 = s.a == Split::Rows ? rank * c.sh.a_rows : 0;
    const int col0 = s.a == Split::Cols ? rank * c.sh.a_cols : 0;
    cut_into(kDefaultInputSeed ^ kStreamA, c.sh.k_total, row0, col0, c.sh.a_rows, c.sh.a_cols, c.values, dst, host_threads);
}

void generate_b_t(const Sharding& s, const OpParams& p, int rank, MatrixDest dst, int host_threads) {
    const Cuts c(s, p);
    const int row0 = !c.shared_b && s.b == Split::Cols ? rank * c.sh.b_rows : 0;
    const int col0 = !c.shared_b && s.b == Split::Rows ? rank * c.sh.b_cols : 0;
    cut_into(kDefaultInputSeed ^ kStreamB, c.bt_cols, row0, col0, c.sh.b_rows, c.sh.b_cols, c.values, dst, host_threads);
}

std::vector<std::byte> generate_bias(const Sharding& s, const OpParams& p) {
    const Cuts c(s, p);
    if (c.sh.bias_len == 0) return {};
    return cut(kDefaultInputSeed ^ kStreamBias, c.sh.bias_len, 0, 0, 1, c.sh.bias_len, c.values).bytes;
}

OpInputs make_op_inputs(const Sharding& s, const OpParams& p, int host_threads) {
    const ShardShapes sh = shard_shapes(s, p);
    OpInputs in;
    in.dtype = p.dtype;
    const int esize = dtype_bytes(p.dtype);
    auto owned = [esize](int rows, int cols) {
        HostMatrix m;
        m.rows = rows;
        m.cols = cols;
        m.esize = esize;
        m.bytes.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * static_cast<std::size_t>(esize));
        return m;
    };
    for (int r = 0; r < p.ranks; ++r) {
        in.a.push_back(owned(sh.a_rows, sh.a_cols));
        generate_a(s, p, r, MatrixDest{in.a.back().bytes.data(), sh.a_cols}, host_threads);
    }
    // B stored transposed; one matrix when every rank holds the same B.
    const int distinct_b = s.b == Split::Replicated ? 1 : p.ranks;
    for (int r = 0; r < distinct_b; ++r) {
        in.b_t.push_back(owned(sh.b_rows, sh.b_cols));
        generate_b_t(s, p, r, MatrixDest{in.b_t.back().bytes.data(), sh.b_cols}, host_threads);
    }
    in.bias = generate_bias(s, p);
    return in;
}

std::vector<float> golden_output(const Sharding& s, const OpParams& p, const OpInputs& in, int host_threads) {
    const ShardShapes sh = shard_shapes(s, p);
    const int m = p.m;
    const int n = p.n;
    std::vector<float> c(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0f);
    // Rank r's share of the product: A_r (its rows) x B_r^T (its columns of C), added to C.
    // Ranks whose shares are the same product (both operands replicated) count once.
    const bool summed = s.k_per_rank || s.a == Split::Cols;
    const bool disjoint = s.a == Split::Rows || s.b == Split::Cols;
    const int contributors = (summed || disjoint) ? p.ranks : 1;
    // B^T widened once per distinct B (all ranks share one when it is replicated).
    // (ZeroedBuffer: every element is written before it is read, so no zero-fill, and large ones
    // on huge pages: fewer page faults.)
    std::vector<ZeroedBuffer> bt_wide;
    for (std::size_t i = 0; i < in.b_t.size(); ++i) {
        const HostMatrix& bt = in.b_t[i];
        bt_wide.emplace_back(static_cast<std::size_t>(bt.rows) * static_cast<std::size_t>(bt.cols) * sizeof(float));
        float* wide = reinterpret_cast<float*>(bt_wide[i].data());
        const std::int64_t min_rows = std::max<std::int64_t>(1, kMinBandElements / std::max(1, bt.cols));
        for_each_band(bt.rows, min_rows, host_threads, [&](std::int64_t b, std::int64_t e) {
            widen_rows(in.dtype, bt, b, e - b, wide + b * bt.cols);
        });
    }
    // A is widened this many rows at a time, one sgemm each: large enough that OpenBLAS packs
    // B^T (K x cols) rarely (it packs it once per call), and a core's band is usually one call.
    constexpr std::int64_t kRowsPerCall = 1024;
    // Every contributor's A_r has the same rows, so the bands are cut once and each band's
    // widened rows buffer serves every contributor in turn (fresh pages cost a fault and the
    // kernel's zeroing each: one buffer per band, not one per band and contributor). Each element
    // of C still gets the contributors' shares in rank order.
    const std::int64_t a_rows = in.a.front().rows;
    const std::int64_t widest_cols = std::max_element(in.b_t.begin(), in.b_t.end(), [](const HostMatrix& x, const HostMatrix& y) {
                                         return x.rows < y.rows;
                                     })->rows;
    const std::int64_t min_rows = std::max<std::int64_t>(1, kMinBandElements / std::max<std::int64_t>(1, widest_cols));
    for_each_band(a_rows, min_rows, host_threads, [&](std::int64_t r0, std::int64_t r1) {
        ZeroedBuffer aw_bytes;
        for (int r = 0; r < contributors; ++r) {
            const HostMatrix& a = in.a[static_cast<std::size_t>(r)];
            const std::size_t bi = in.b_t.size() == 1 ? 0 : static_cast<std::size_t>(r);
            const HostMatrix& bt = in.b_t[bi];
            const float* btw = reinterpret_cast<const float*>(bt_wide[bi].data());
            // Which K range of B^T pairs with A_r: all of B_r, or A_r's column block of a K-split A
            // against a replicated B.
            const int k = a.cols;
            const int b_col0 = (s.a == Split::Cols && s.b == Split::Replicated && !s.k_per_rank) ? r * k : 0;
            const int row0 = s.a == Split::Rows ? r * sh.a_rows : 0;
            const int col0 = s.b == Split::Cols ? r * sh.b_rows : 0;
            const int cols = bt.rows;
            const float beta = summed ? 1.0f : 0.0f;
            const std::size_t need = static_cast<std::size_t>(std::min(kRowsPerCall, r1 - r0)) * static_cast<std::size_t>(k) * sizeof(float);
            if (aw_bytes.size() < need) aw_bytes = ZeroedBuffer(need);
            float* aw = reinterpret_cast<float*>(aw_bytes.data());
            for (std::int64_t i0 = r0; i0 < r1; i0 += kRowsPerCall) {
                const std::int64_t rows = std::min(kRowsPerCall, r1 - i0);
                widen_rows(in.dtype, a, i0, rows, aw);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), cols, k, 1.0f, aw, k,
                            btw + b_col0, bt.cols, beta, c.data() + (row0 + i0) * n + col0, n);
            }
        }
    });
    if (!in.bias.empty()) {
        std::vector<float> bias(static_cast<std::size_t>(in.bias_len()));
        widen_elements(in.dtype, in.bias.data(), bias.data(), bias.size());
        const bool per_row = p.bias == kernels::BiasKind::M;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) c[static_cast<std::size_t>(i) * n + j] += per_row ? bias[i] : bias[j];
    }
    return c;
}

std::vector<float> expected_for_rank(const Sharding& s, const OpParams& p, const std::vector<float>& c, int rank) {
    if (s.out != Split::Cols) return c;
    const int cols = p.n / p.ranks;
    std::vector<float> out(static_cast<std::size_t>(p.m) * static_cast<std::size_t>(cols));
    for (int i = 0; i < p.m; ++i)
        std::memcpy(out.data() + static_cast<std::size_t>(i) * cols, c.data() + static_cast<std::size_t>(i) * p.n + rank * cols,
                    static_cast<std::size_t>(cols) * sizeof(float));
    return out;
}

}  // namespace tandem::host
