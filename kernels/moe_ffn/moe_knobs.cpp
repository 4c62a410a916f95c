// moe_ffn's knobs and their checks (moe_knobs.hpp).
#include "kernels/moe_ffn/moe_knobs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/param_error.hpp"

namespace tandem::kernels::moe {

namespace {

// --routing's words: round_robin (0), uniform (1), zipf (2), zipf:S (2, and zipf_s_pct = 100 S).
std::optional<std::map<std::string, int>> routing_words(const std::string& text) {
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == "round_robin" || t == "round-robin") return std::map<std::string, int>{{"routing", 0}};
    if (t == "uniform") return std::map<std::string, int>{{"routing", 1}};
    if (t == "zipf") return std::map<std::string, int>{{"routing", 2}};
    if (t.rfind("zipf:", 0) != 0) return std::nullopt;
    const std::string s = t.substr(5);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    // S in 0.01 steps, as zipf_s_pct holds it (its range is checked with the knob's).
    if (s.empty() || end != s.c_str() + s.size() || !(v > 0) || v > 1e6) return std::nullopt;
    return std::map<std::string, int>{{"routing", 2}, {"zipf_s_pct", static_cast<int>(std::lround(v * 100))}};
}

}  // namespace

std::map<std::string, int> moe_knobs(const OpParams& p) {
    const MoeShape s = moe_shape_of(p);
    return {{"topk", s.topk},
            {"experts_per_rank", s.experts},
            {"routing", static_cast<int>(s.routing)},
            {"zipf_s_pct", s.zipf_s_pct},
            {"route_seed", s.seed},
            {"max_output_size", s.max_output_size}};
}

std::vector<KnobDesc> moe_knob_descs() {
    return {KnobDesc{"topk", {}, "routes per token (default 8, the published cases')", {}},
           KnobDesc{"experts_per_rank", {}, "local experts per rank E (default 16)", {}},
           KnobDesc{"routing", {},
                    "router: round_robin (0, the published one, default), uniform (1, seeded), zipf (2) or zipf:S "
                    "(2 with the exponent S: --zipf-s-pct 100 S)",
                    {}, routing_words, "round_robin, uniform, zipf or zipf:S (S > 0, like zipf:1.2)"},
           KnobDesc{"zipf_s_pct", {}, "routing 2: the Zipf exponent S x 100 (default 120)", {}},
           KnobDesc{"route_seed", {}, "routing 1 and 2: the seed (default 0)", {}},
           KnobDesc{"max_output_size", {}, "rows a rank's receive buffers hold; more routed to a rank is refused "
                                           "(default 81940, the published cases')", {}}};
}

void check_moe_routing(const OpParams& p) {
    const MoeShape s = moe_shape_of(p);
    check_knob_range(p, "experts_per_rank", 1, 256, "local experts per rank (a count row holds 256)");
    check_knob_range(p, "topk", 1, std::min(256, s.global_experts()), "routes per token, at most the global experts");
    check_knob_range(p, "routing", 0, 2, "the router, 0 round_robin (published), 1 uniform or 2 zipf:");
    check_knob_range(p, "zipf_s_pct", 1, 1000, "the Zipf exponent S x 100");
    check_knob_range(p, "max_output_size", 1, std::numeric_limits<int>::max(), "rows a rank's receive buffers hold:");
    {
        // The receive buffers hold max_output_size rows: a rank routed more has no room (the
        // published kernel would overrun them), so the run is refused naming the rank.
        const RouteTables t = make_route_tables(s);
        for (int r = 0; r < s.ranks; ++r) {
            const int rows = t.recv_total[static_cast<std::size_t>(r)];
            if (rows > s.max_output_size) {
                throw ParamError({ParamValue::knob("max_output_size", s.max_output_size)},
                                 fmt::format("rank {} receives {} routed rows, more than its receive buffers hold (the "
                                             "rows its local experts get from every rank's routes)",
                                             r, rows),
                                 {ParamValue::knob("max_output_size", t.max_recv)});
            }
        }
    }
}

}  // namespace tandem::kernels::moe
