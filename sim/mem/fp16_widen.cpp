#include "sim/mem/fp16_widen.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>
#include <vector>

#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem {

namespace {

// Every fp16 value widened once: an immutable table, built on first use.
const std::vector<float>& half_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (std::size_t i = 0; i < t.size(); ++i) t[i] = half_to_float(static_cast<std::uint16_t>(i));
        return t;
    }();
    return table;
}

#if defined(__x86_64__)
// F16C converts 8 halves per instruction.
__attribute__((target("f16c,avx"))) void widen_f16c(const std::uint16_t* h, float* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(packed));
    }
    for (; i < n; ++i) out[i] = half_to_float(h[i]);
}

__attribute__((target("f16c,avx"))) void narrow_f16c(const float* f, std::uint16_t* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(f + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
            for (std::size_t j = i; j < i + 8; ++j) out[j] = float_to_half(f[j]);
            continue;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; ++i) out[i] = float_to_half(f[i]);
}

bool has_f16c() {
    static const bool supported = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return supported;
}
#endif

}  // namespace

void widen_halves(const std::uint16_t* src, float* dst, std::size_t count) {
#if defined(__x86_64__)
    if (has_f16c()) {
        widen_f16c(src, dst, count);
        return;
    }
#endif
    const float* table = half_table().data();
    for (std::size_t i = 0; i < count; ++i) dst[i] = table[src[i]];
}

void widen_bf16s(const std::uint16_t* src, float* dst, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t bits = static_cast<std::uint32_t>(src[i]) << 16;
        std::memcpy(dst + i, &bits, sizeof bits);
    }
}

void widen_16bit(DType dtype, const std::uint16_t* src, float* dst, std::size_t count) {
    if (dtype == DType::BF16) widen_bf16s(src, dst, count);
    else widen_halves(src, dst, count);
}

void widen_to_float(DType dtype, const std::byte* src, float* dst, std::size_t count) {
    if (dtype == DType::F32) {
        std::memcpy(dst, src, count * sizeof(float));
        return;
    }
    widen_16bit(dtype, reinterpret_cast<const std::uint16_t*>(src), dst, count);
}

void narrow_16bit(DType dtype, const float* src, std::uint16_t* dst, std::size_t count) {
    if (dtype == DType::BF16) {
        for (std::size_t i = 0; i < count; ++i) dst[i] = float_to_bf16(src[i]);
        return;
    }
#if defined(__x86_64__)
    if (has_f16c()) {
        narrow_f16c(src, dst, count);
        return;
    }
#endif
    for (std::size_t i = 0; i < count; ++i) dst[i] = float_to_half(src[i]);
}

}  // namespace tandem
