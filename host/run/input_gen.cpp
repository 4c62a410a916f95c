// The seed's integer-valued inputs from a counter-based splitmix64. See input_gen.hpp for the
// exact definition, which scripts/gen_data.py implements too.
#include "host/run/input_gen.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>

#include "host/run/parallel_bands.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem::host {
namespace {

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;

// The four values 1 + (output >> 62) can take, in fp16 bits.
struct ValueBits {
    std::array<std::uint16_t, 4> bits;
    ValueBits() {
        for (std::size_t v = 0; v < bits.size(); ++v) bits[v] = tandem::float_to_half(static_cast<float>(1 + v));
    }
};

constexpr std::uint64_t kMix1 = 0xBF58476D1CE4E5B9ULL;
constexpr std::uint64_t kMix2 = 0x94D049BB133111EBULL;

inline std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * kMix1;
    z = (z ^ (z >> 27)) * kMix2;
    return z ^ (z >> 31);
}

#if defined(__x86_64__)
// The low 64 bits of a * b per 64-bit lane (AVX2 has no 64-bit multiply): lo*lo + (hi*lo +
// lo*hi) << 32, with `b_hi` = b >> 32.
__attribute__((target("avx2"))) inline __m256i mul64(__m256i a, __m256i b, __m256i b_hi) {
    const __m256i lo_lo = _mm256_mul_epu32(a, b);
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b), _mm256_mul_epu32(a, b_hi));
    return _mm256_add_epi64(lo_lo, _mm256_slli_epi64(cross, 32));
}

// Four consecutive outputs per step: lane j holds state + (first + j + 1) * gamma, and each
// step adds 4 * gamma (all modulo 2^64, as the scalar form).
__attribute__((target("avx2"))) void splitmix64_run_avx2(std::uint64_t state, std::uint64_t first, std::uint64_t* out,
                                                         std::size_t count) {
    const __m256i m1 = _mm256_set1_epi64x(static_cast<long long>(kMix1));
    const __m256i m1_hi = _mm256_set1_epi64x(static_cast<long long>(kMix1 >> 32));
    const __m256i m2 = _mm256_set1_epi64x(static_cast<long long>(kMix2));
    const __m256i m2_hi = _mm256_set1_epi64x(static_cast<long long>(kMix2 >> 32));
    const __m256i step = _mm256_set1_epi64x(static_cast<long long>(4 * kGamma));
    const std::uint64_t z0 = state + (first + 1) * kGamma;
    __m256i z = _mm256_set_epi64x(static_cast<long long>(z0 + 3 * kGamma), static_cast<long long>(z0 + 2 * kGamma),
                                  static_cast<long long>(z0 + kGamma), static_cast<long long>(z0));
    std::size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        __m256i x = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
        x = mul64(x, m1, m1_hi);
        x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 27));
        x = mul64(x, m2, m2_hi);
        x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), x);
        z = _mm256_add_epi64(z, step);
    }
    for (; i < count; ++i) out[i] = mix(state + (first + i + 1) * kGamma);
}

bool has_avx2() {
    static const bool supported = __builtin_cpu_supports("avx2");
    return supported;
}
#endif

// Elements are independent (counter-based), so bands of them are filled in parallel.
std::vector<std::uint16_t> fill(std::uint64_t state, std::uint64_t first_index, std::int64_t count) {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(count));
    const ValueBits values;
    constexpr std::int64_t kMinBand = 1 << 20;  // below this a thread costs more than it saves
    for_each_band(count, kMinBand, 0, [&](std::int64_t begin, std::int64_t end) {
        std::array<std::uint64_t, kSplitmixChunk> z{};
        for (std::int64_t i = begin; i < end; i += kSplitmixChunk) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(kSplitmixChunk, end - i));
            splitmix64_run(state, first_index + static_cast<std::uint64_t>(i), z.data(), n);
            for (std::size_t j = 0; j < n; ++j) out[static_cast<std::size_t>(i) + j] = values.bits[z[j] >> 62];
        }
    });
    return out;
}

}  // namespace

std::uint64_t splitmix64_at(std::uint64_t state, std::uint64_t i) {
    return mix(state + (i + 1) * kGamma);  // unsigned: wraps modulo 2^64 as intended
}

void splitmix64_run(std::uint64_t state, std::uint64_t first, std::uint64_t* out, std::size_t count) {
#if defined(__x86_64__)
    if (has_avx2()) {
        splitmix64_run_avx2(state, first, out, count);
        return;
    }
#endif
    for (std::size_t i = 0; i < count; ++i) out[i] = mix(state + (first + i + 1) * kGamma);
}

std::vector<std::uint16_t> make_a_slice(int rank, int rows, int k, std::uint64_t seed) {
    const std::uint64_t first = static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(k);
    return fill(seed ^ kStreamA, first, std::int64_t{rows} * k);
}

std::vector<std::uint16_t> make_b_transposed(int n, int k, std::uint64_t seed) {
    return fill(seed ^ kStreamB, 0, std::int64_t{n} * k);
}

}  // namespace tandem::host
