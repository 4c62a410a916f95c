#pragma once
// One element of a floating-point tile or tensor, read as a float (exactly: every fp16 and bf16
// value is a float) and written from a float (rounded to nearest even for fp16 and bf16). Used
// by the functional vector unit, the FIX pipe's casts and atomic adds; timing never calls it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "sim/mem/bf16.hpp"
#include "sim/mem/dtype.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem {

template <DType T>
inline float load_as_float(const std::byte* p) {
    if constexpr (T == DType::F32) {
        float f;
        std::memcpy(&f, p, sizeof f);
        return f;
    } else {
        static_assert(T == DType::F16 || T == DType::BF16, "floating-point dtypes only");
        std::uint16_t h;
        std::memcpy(&h, p, sizeof h);
        return T == DType::F16 ? half_to_float(h) : bf16_to_float(h);
    }
}

template <DType T>
inline void store_from_float(std::byte* p, float f) {
    if constexpr (T == DType::F32) {
        std::memcpy(p, &f, sizeof f);
    } else {
        static_assert(T == DType::F16 || T == DType::BF16, "floating-point dtypes only");
        const std::uint16_t h = T == DType::F16 ? float_to_half(f) : float_to_bf16(f);
        std::memcpy(p, &h, sizeof h);
    }
}

// An int8 element: read exactly; written rounded to nearest even and saturated to [-128, 127]
// (the vector unit's cast to int8 with rint rounding).
inline float load_i8_as_float(const std::byte* p) { return static_cast<float>(static_cast<std::int8_t>(*p)); }
inline void store_i8_from_float(std::byte* p, float f) {
    const float r = std::nearbyint(f);
    const float c = r > 127.0f ? 127.0f : (r < -128.0f ? -128.0f : r);
    *p = static_cast<std::byte>(static_cast<std::int8_t>(c));
}
inline std::int32_t load_i32(const std::byte* p) {
    std::int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Runtime-dtype versions (for code that is not per element hot). I32 reads and writes exact
// integers (an integer accumulator); I8 as above.
inline float load_as_float(const std::byte* p, DType t) {
    switch (t) {
        case DType::I8: return load_i8_as_float(p);
        case DType::I32: return static_cast<float>(load_i32(p));
        case DType::F16: return load_as_float<DType::F16>(p);
        case DType::BF16: return load_as_float<DType::BF16>(p);
        default: return load_as_float<DType::F32>(p);
    }
}
inline void store_from_float(std::byte* p, DType t, float f) {
    switch (t) {
        case DType::I8: store_i8_from_float(p, f); return;
        case DType::I32: {
            const std::int32_t v = static_cast<std::int32_t>(std::nearbyint(f));
            std::memcpy(p, &v, sizeof v);
            return;
        }
        case DType::F16: store_from_float<DType::F16>(p, f); return;
        case DType::BF16: store_from_float<DType::BF16>(p, f); return;
        default: store_from_float<DType::F32>(p, f); return;
    }
}
// `value` rounded to dtype `t` and back (what a result computed in float becomes in `t`).
inline float round_to(DType t, float value) {
    std::byte b[4];
    store_from_float(b, t, value);
    return load_as_float(b, t);
}

// Calls f.template operator()<T>() with the floating-point dtype T = t (for loops that want the
// dtype as a compile-time constant).
template <class F>
inline decltype(auto) dispatch_float_dtype(DType t, F&& f) {
    switch (t) {
        case DType::F16: return f.template operator()<DType::F16>();
        case DType::BF16: return f.template operator()<DType::BF16>();
        default: return f.template operator()<DType::F32>();
    }
}

}  // namespace tandem
