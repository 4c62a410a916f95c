#pragma once
// Element types of tiles and tensors.
#include <cstdint>

namespace tandem {

// BF16 is bfloat16 (the upper half of an IEEE binary32); F16 is IEEE binary16. I8 is a signed
// byte: the cube's int8 operands (int8 x int8 -> int32 in L0C) and the vector unit's quantised rows.
enum class DType : std::uint8_t { F16, F32, I32, BF16, I8 };

inline constexpr int dtype_bytes(DType t) { return t == DType::I8 ? 1 : (t == DType::F16 || t == DType::BF16 ? 2 : 4); }
inline constexpr const char* dtype_name(DType t) {
    switch (t) {
        case DType::F16: return "fp16";
        case DType::F32: return "fp32";
        case DType::I32: return "int32";
        case DType::BF16: return "bf16";
        case DType::I8: return "int8";
    }
    return "?";
}
// The floating-point types the vector unit computes in and the cube's operands come in.
inline constexpr bool is_float_dtype(DType t) { return t == DType::F16 || t == DType::F32 || t == DType::BF16; }

}  // namespace tandem
