#include "kernels/common/op_checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem::kernels {

namespace {
constexpr double kFp32Bytes = 4;

std::optional<std::string> first_overflow(const std::vector<BufferNeed>& needs, const std::string& profile) {
    for (const BufferNeed& need : needs) {
        if (need.bytes > static_cast<double>(need.capacity)) {
            return fmt::format("{} holds {} = {:.0f} bytes, more than the {} {} bytes of profile {}", need.buffer,
                               need.holds, need.bytes, need.buffer, need.capacity, profile);
        }
    }
    return std::nullopt;
}

// A nearby tile that fits every buffer: first a smaller base-m, then a smaller base-n. The search
// starts no higher than the largest side the L0C accumulator allows (the other side >= f), so it
// stays short even for absurd inputs.
std::vector<ParamValue> fitting_tile_hint(std::int64_t bm, std::int64_t bn, const BufferLimits& lim,
                                          const BufferNeeds& needs) {
    const std::int64_t f = lim.cube_fractal;
    const std::int64_t longest = lim.l0c_bytes / (f * static_cast<std::int64_t>(kFp32Bytes)) / f * f;
    auto fits = [&](double m, double n) { return !first_overflow(needs(m, n), lim.profile_name); };
    for (std::int64_t m = std::min(bm - f, longest); m >= f; m -= f) {
        if (fits(static_cast<double>(m), static_cast<double>(bn))) return {{kParamBaseM, m}};
    }
    for (std::int64_t n = std::min(bn - f, longest); n >= f; n -= f) {
        if (fits(static_cast<double>(bm), static_cast<double>(n))) return {{kParamBaseN, n}};
    }
    return {{kParamBaseM, f}, {kParamBaseN, f}};
}
}  // namespace

void fail_check(const std::string& message) { throw SimError(message); }

std::int64_t nearest_multiple(std::int64_t value, std::int64_t step) {
    if (value <= step) return step;
    const std::int64_t lo = value / step * step;
    const std::int64_t hi = lo + step;
    // Sizes are ints: a suggestion past the largest would be refused in its turn.
    if (hi > std::numeric_limits<int>::max()) return lo;
    return value - lo < hi - value ? lo : hi;
}

void check_positive(const ParamRef& p, std::int64_t value, std::int64_t suggestion, const char* suggestion_expr) {
    if (value > 0) return;
    const std::string least = std::to_string(suggestion) == suggestion_expr
                                  ? std::to_string(suggestion)
                                  : fmt::format("{} = {}", suggestion_expr, suggestion);
    throw ParamError({{p, value}}, fmt::format("{} must be positive (at least {})", p.word, least), {{p, suggestion}});
}

void check_multiple(const ParamRef& p, std::int64_t value, std::int64_t step, const char* step_expr,
                    const std::string& why) {
    if (value % step == 0) return;
    throw ParamError({{p, value}}, fmt::format("{} must be a multiple of {} = {} ({})", p.word, step_expr, step, why),
                     {{p, nearest_multiple(value, step)}});
}

void check_out_dtype_fp32_or_input(const OpParams& p) {
    if (p.out_dtype != DType::F32 && p.out_dtype != p.dtype) {
        throw ParamError({{kParamOutDtype, dtype_name(p.out_dtype)}},
                         fmt::format("the output is fp32 or the input dtype ({})", dtype_name(p.dtype)));
    }
}

void check_int8_rules(const OpParams& p) {
    if (p.dtype != DType::I8) return;
    if (p.out_dtype != DType::F32) {
        throw ParamError({{kParamOutDtype, dtype_name(p.out_dtype)}},
                         "int8 inputs give an fp32 output (the int32 sums, converted on the way out of L0C); use fp32");
    }
    if (p.bias != BiasKind::None) {
        throw ParamError({{kParamBias, bias_name(p.bias)}},
                         "no bias with int8 inputs (the int8 cube's accumulator starts from zero: TMATMUL_BIAS takes "
                         "float operands only); use none");
    }
}

std::vector<BufferNeed> gemm_tile_needs(double bm, double bn, const BufferLimits& lim, double elem_bytes) {
    // The K panel (kernels/common/panel_k.hpp): base-n deep for 2-byte operands, base-n/2 for fp32,
    // 2 base-n for int8 (the same bytes). The accumulator (fp32, or int32 for int8) is 4 bytes.
    const bool fp32 = elem_bytes == 4;
    const bool int8 = elem_bytes == 1;
    const double pk = fp32 ? std::floor(bn / 2) : (int8 ? 2 * bn : bn);
    const double bk = std::floor(pk / 4);  // the cube's K step
    const char* e = fp32 ? "fp32" : (int8 ? "int8" : "fp16");
    const char* k = fp32 ? "base-n/2" : (int8 ? "2*base-n" : "base-n");
    const char* step = fp32 ? "base-n/8" : (int8 ? "base-n/2" : "base-n/4");
    return {
        {"L0C", fmt::format("one base-m x base-n {} accumulator", int8 ? "int32" : "fp32"), bm * bn * kFp32Bytes,
         lim.l0c_bytes},
        {"L0A", fmt::format("two base-m x {} {} tiles", step, e), 2 * bm * bk * elem_bytes, lim.l0a_bytes},
        {"L0B", fmt::format("two {} x base-n {} tiles", step, e), 2 * bk * bn * elem_bytes, lim.l0b_bytes},
        {"L1", fmt::format("two base-m x {} A panels and two {} x base-n B panels ({})", k, k, e),
         2 * (bm * pk + pk * bn) * elem_bytes, lim.l1_bytes},
    };
}

std::vector<BufferNeed> gemm_tile_and_ping_pong_needs(double bm, double bn, const BufferLimits& lim) {
    std::vector<BufferNeed> needs = gemm_tile_needs(bm, bn, lim);
    needs.push_back({"UB", "the comm kernel's two base-m x base-n fp16 tiles (ping and pong, as published)",
                     2 * bm * bn * 2, lim.ub_bytes});
    return needs;
}

void check_comm_blocks_resident(const OpParams& p, const BufferLimits& lim, std::string_view why) {
    if (p.comm_blocks > lim.aiv_cores) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}},
                         fmt::format("{}, so all must be resident at once: at most the {} AIV cores of {}", why,
                                     lim.aiv_cores, lim.profile_name),
                         {{kParamCommBlocks, lim.aiv_cores}});
    }
}

void check_gemm_tile(const OpParams& c, const BufferLimits& lim, const BufferNeeds& needs) {
    const int f = lim.cube_fractal;
    if (c.base_m <= 0 || c.base_m % f != 0) {
        throw ParamError({{kParamBaseM, c.base_m}},
                         fmt::format("base-m must be a positive multiple of the cube fractal {} (the cube multiplies "
                                     "{}x{} blocks)",
                                     f, f, f),
                         {{kParamBaseM, nearest_multiple(c.base_m, f)}});
    }
    if (c.base_n <= 0 || c.base_n % 4 != 0) {
        throw ParamError({{kParamBaseN, c.base_n}},
                         "base-n must be a positive multiple of 4 (the cube's K step is base-n/4)",
                         {{kParamBaseN, nearest_multiple(c.base_n, std::lcm(4, f))}});
    }
    if (c.base_n % f != 0) {
        throw ParamError({{kParamBaseN, c.base_n}},
                         fmt::format("base-n must be a multiple of the cube fractal {} (the cube multiplies {}x{} blocks)",
                                     f, f, f),
                         {{kParamBaseN, nearest_multiple(c.base_n, std::lcm(4, f))}});
    }
    if (const auto overflow = first_overflow(needs(c.base_m, c.base_n), lim.profile_name)) {
        throw ParamError({{kParamBaseM, c.base_m}, {kParamBaseN, c.base_n}},
                         fmt::format("the tile does not fit the kernels' buffers: {}", *overflow),
                         fitting_tile_hint(c.base_m, c.base_n, lim, needs));
    }
}

void check_knob_range(const OpParams& p, const std::string& knob, int lo, int hi, const std::string& what) {
    const std::optional<int> v = p.knob(knob);
    if (!v || (*v >= lo && *v <= hi)) return;
    throw ParamError({ParamValue::knob(knob, *v)}, fmt::format("{} {}..{} here", what, lo, hi),
                     {ParamValue::knob(knob, std::clamp(*v, lo, hi))});
}

}  // namespace tandem::kernels
