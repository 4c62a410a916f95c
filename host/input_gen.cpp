// The seed's integer-valued inputs from a counter-based splitmix64. See input_gen.hpp for the
// exact definition, which scripts/gen_data.py implements too.
#include "host/input_gen.hpp"

#include <array>

#include "host/parallel_bands.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem::host {
namespace {

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
constexpr std::uint64_t kStreamA = 0x4141414141414141ULL;
constexpr std::uint64_t kStreamB = 0x4242424242424242ULL;

// The four values 1 + (output >> 62) can take, in fp16 bits.
struct ValueBits {
    std::array<std::uint16_t, 4> bits;
    ValueBits() {
        for (std::size_t v = 0; v < bits.size(); ++v) bits[v] = tandem::float_to_half(static_cast<float>(1 + v));
    }
};

// Elements are independent (counter-based), so bands of them are filled in parallel.
std::vector<std::uint16_t> fill(std::uint64_t state, std::uint64_t first_index, std::int64_t count) {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(count));
    const ValueBits values;
    constexpr std::int64_t kMinBand = 1 << 20;  // below this a thread costs more than it saves
    for_each_band(count, kMinBand, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
            out[static_cast<std::size_t>(i)] = values.bits[splitmix64_at(state, first_index + static_cast<std::uint64_t>(i)) >> 62];
        }
    });
    return out;
}

}  // namespace

std::uint64_t splitmix64_at(std::uint64_t state, std::uint64_t i) {
    std::uint64_t z = state + (i + 1) * kGamma;  // unsigned: wraps modulo 2^64 as intended
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::vector<std::uint16_t> make_a_slice(int rank, int rows, int k, std::uint64_t seed) {
    const std::uint64_t first = static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(k);
    return fill(seed ^ kStreamA, first, std::int64_t{rows} * k);
}

std::vector<std::uint16_t> make_b_transposed(int n, int k, std::uint64_t seed) {
    return fill(seed ^ kStreamB, 0, std::int64_t{n} * k);
}

}  // namespace tandem::host
