#pragma once
// The seed's inputs (kernels/allgather_gemm/README.md "Data layout": small integers 1..4, fixed seed), generated
// deterministically and identically by this C++ code and by scripts/gen_data.py, so files
// written by either are byte-identical.
//
// Generator (keep in sync with scripts/gen_data.py):
//   splitmix64 (Steele, Lea, Flood 2014): state += 0x9E3779B97F4A7C15;
//     z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//     output z ^ (z >> 31)   (all arithmetic modulo 2^64).
//   The i-th output (i = 0, 1, ...) of a generator started at state s is therefore
//     mix(s + (i + 1) * 0x9E3779B97F4A7C15), so any element can be computed on its own.
//   value = 1 + (output >> 62), an integer 1..4, stored as fp16.
//   A (M x K, row-major): element (row, col) is output i = row * K + col of the stream
//     s = seed ^ 0x4141414141414141 ("AAAAAAAA"); rank r's file holds global rows
//     [r*M/n, (r+1)*M/n), so A does not depend on the number of ranks.
//   B stored transposed (N x K, row-major): element (col_n, row_k) is output i = col_n * K + row_k
//     of the stream s = seed ^ 0x4242424242424242 ("BBBBBBBB").
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem::host {

// The streams named above, shared with op_inputs.cpp (which cuts the same matrices into shards).
inline constexpr std::uint64_t kStreamA = 0x4141414141414141ULL;  // "AAAAAAAA"
inline constexpr std::uint64_t kStreamB = 0x4242424242424242ULL;  // "BBBBBBBB"


inline constexpr std::uint64_t kDefaultInputSeed = 2025;
// Outputs generated per splitmix64_run call by the fillers (a stack buffer's worth).
inline constexpr std::int64_t kSplitmixChunk = 256;

// The i-th output of splitmix64 started at `state`.
std::uint64_t splitmix64_at(std::uint64_t state, std::uint64_t i);

// Outputs first, first + 1, ..., first + count - 1 of splitmix64 started at `state`, into `out`:
// the same values as splitmix64_at, four at a time with AVX2 where the CPU has it (chosen at
// run time), one at a time otherwise.
void splitmix64_run(std::uint64_t state, std::uint64_t first, std::uint64_t* out, std::size_t count);

// Rank `rank`'s slice of A: `rows` (= M/n) x `k` fp16 bits, global rows rank*rows ...
std::vector<std::uint16_t> make_a_slice(int rank, int rows, int k, std::uint64_t seed = kDefaultInputSeed);

// B stored transposed: `n` x `k` fp16 bits (the same on every rank).
std::vector<std::uint16_t> make_b_transposed(int n, int k, std::uint64_t seed = kDefaultInputSeed);

}  // namespace tandem::host
