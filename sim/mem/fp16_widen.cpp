#include "sim/mem/fp16_widen.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>
#include <vector>

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

}  // namespace tandem
