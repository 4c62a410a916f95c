#pragma once
// Element types of tiles and tensors.
#include <cstdint>

namespace tandem {

enum class DType : std::uint8_t { F16, F32, I32 };

inline constexpr int dtype_bytes(DType t) { return t == DType::F16 ? 2 : 4; }
inline constexpr const char* dtype_name(DType t) {
    return t == DType::F16 ? "fp16" : (t == DType::F32 ? "fp32" : "int32");
}

}  // namespace tandem
