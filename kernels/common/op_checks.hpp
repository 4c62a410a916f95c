#pragma once
// Checks that ops share when they validate a run (VariantDesc::validate): one-line messages
// naming the parameter by its quantity (M, base-n), the value, the rule and a nearby valid value,
// thrown as kernels::ParamError so that each caller says the parameter in its own words
// (the command line `--gk 1000: ...`, Python `k=1000: ...`).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/op_desc.hpp"
#include "kernels/param_error.hpp"

namespace tandem::kernels {

[[noreturn]] void fail_check(const std::string& message);  // throws SimError (a rule that names no parameter)

// The nearest positive multiple of `step` (ties go up).
std::int64_t nearest_multiple(std::int64_t value, std::int64_t step);

// "K = 0: K must be positive (at least base-n = 256); nearest valid: 256".
void check_positive(const ParamRef& p, std::int64_t value, std::int64_t suggestion, const char* suggestion_expr);
// "K = 1000: K must be a multiple of base-n = 256 (A is sent in base-m x base-n tiles); nearest valid: 1024".
void check_multiple(const ParamRef& p, std::int64_t value, std::int64_t step, const char* step_expr,
                    const std::string& why);

// The output dtype is fp32 or the input dtype (the kernels cast fp32 accumulators to one of them).
void check_out_dtype_fp32_or_input(const OpParams& p);
// int8 inputs (the Iris-family ops): the output is fp32 (the int32 sums converted by the FIX pipe)
// and there is no bias (the int8 cube takes none). Nothing for other dtypes.
void check_int8_rules(const OpParams& p);

// One local buffer a tile configuration fills.
struct BufferNeed {
    const char* buffer;    // "L0C"
    std::string holds;     // what it holds, for the message
    double bytes;          // in double: absurd tile sizes must give a message, not an overflow
    std::int64_t capacity;
};
using BufferNeeds = std::function<std::vector<BufferNeed>(double base_m, double base_n)>;

// What the shared GEMM tile pipeline (kernels/common/gemm_tile_pipeline.hpp) holds for a
// base_m x base_n tile with `elem_bytes`-byte operands: L0C, L0A, L0B, L1.
std::vector<BufferNeed> gemm_tile_needs(double base_m, double base_n, const BufferLimits& lim, double elem_bytes = 2);

// gemm_tile_needs and a comm kernel's two base-m x base-n fp16 UB tiles (ping and pong), which
// the published AIV kernels that move whole GEMM tiles hold.
std::vector<BufferNeed> gemm_tile_and_ping_pong_needs(double base_m, double base_n, const BufferLimits& lim);

// Comm blocks that must all be resident at once (something waits for every one of them: `why`,
// e.g. "the device barrier waits for every comm block"): at most the profile's AIV cores.
void check_comm_blocks_resident(const OpParams& p, const BufferLimits& lim, std::string_view why);

// base-m and base-n: multiples of the cube fractal, base-n of 4 (the cube's K step is base-n/4),
// and every buffer of `needs` large enough (else a nearby tile that fits is suggested).
void check_gemm_tile(const OpParams& p, const BufferLimits& lim, const BufferNeeds& needs);

// A knob given with a value outside [lo, hi]: "chunk-tiles = 0: ... holds 1..128 tiles here (why); nearest valid: 1".
void check_knob_range(const OpParams& p, const std::string& knob, int lo, int hi, const std::string& what);

}  // namespace tandem::kernels
