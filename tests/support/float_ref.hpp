#pragma once
// Reference rounding for the tests, written independently of sim/mem: the exact value (a double
// holding a sum or product of two 16-bit floats exactly) rounded to nearest, ties to even, in a
// binary format with `mant_bits` fraction bits, through scaling by the ulp and std::nearbyint
// (the default rounding mode rounds half to even).
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tandem::test {

inline double round_ref(double x, int mant_bits, int min_exp, double max_finite) {
    if (x == 0 || std::isnan(x) || std::isinf(x)) return x;
    int e = std::ilogb(x);
    if (e < min_exp) e = min_exp;  // subnormals share the smallest normal exponent's ulp
    const double ulp = std::ldexp(1.0, e - mant_bits);
    const double q = std::nearbyint(x / ulp) * ulp;
    if (std::fabs(q) > max_finite) return std::copysign(INFINITY, x);
    return q;
}
inline double round_f16(double x) { return round_ref(x, 10, -14, 65504.0); }
inline double round_bf16(double x) { return round_ref(x, 7, -126, std::ldexp(255.0 / 128.0, 127)); }
inline double round_f32(double x) { return round_ref(x, 23, -126, 3.4028234663852886e38); }

}  // namespace tandem::test
