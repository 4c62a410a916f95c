#pragma once
// One element of a floating-point tile or tensor, read as a float (exactly: every fp16 and bf16
// value is a float) and written from a float (rounded to nearest even for fp16 and bf16). Used
// by the functional vector unit, the FIX pipe's casts and atomic adds; timing never calls it.
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

// Runtime-dtype versions (for code that is not per element hot).
inline float load_as_float(const std::byte* p, DType t) {
    switch (t) {
        case DType::F16: return load_as_float<DType::F16>(p);
        case DType::BF16: return load_as_float<DType::BF16>(p);
        default: return load_as_float<DType::F32>(p);
    }
}
inline void store_from_float(std::byte* p, DType t, float f) {
    switch (t) {
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
