#pragma once
// Bulk widening of 16-bit floats to fp32 (exact), and narrowing back (round to nearest even). fp16 uses x86 F16C when the CPU has it (chosen
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
// A float cube operand's elements as fp32, by `dtype`: fp16 or bf16 widened, fp32 copied.
void widen_to_float(DType dtype, const std::byte* src, float* dst, std::size_t count);

// fp32 to fp16 or bf16 by `dtype`, bit for bit what float_to_half / float_to_bf16 give element by
// element (fp16 with F16C where the CPU has it: its round-to-nearest-even is IEEE's, as is
// float_to_half's; groups holding a NaN go element by element, F16C keeps NaN payloads).
void narrow_16bit(DType dtype, const float* src, std::uint16_t* dst, std::size_t count);

}  // namespace tandem
