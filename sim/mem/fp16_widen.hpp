#pragma once
// Bulk fp16 -> fp32 widening (exact). Uses x86 F16C when the CPU has it (chosen at run time, so
// the binary still runs without it), a 64 Ki-entry table otherwise; both give the same bits.
#include <cstddef>
#include <cstdint>

namespace tandem {

void widen_halves(const std::uint16_t* src, float* dst, std::size_t count);

}  // namespace tandem
