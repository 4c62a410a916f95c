#pragma once
// Bulk widening of 16-bit floats to fp32 (exact). fp16 uses x86 F16C when the CPU has it (chosen
// at run time, so the binary still runs without it), a 64 Ki-entry table otherwise; both give the
// same bits. bf16 is a shift.
#include <cstddef>
#include <cstdint>

#include "sim/mem/dtype.hpp"

namespace tandem {

void widen_halves(const std::uint16_t* src, float* dst, std::size_t count);
void widen_bf16s(const std::uint16_t* src, float* dst, std::size_t count);
// fp16 or bf16 by `dtype` (a cube operand's type).
void widen_16bit(DType dtype, const std::uint16_t* src, float* dst, std::size_t count);

}  // namespace tandem
