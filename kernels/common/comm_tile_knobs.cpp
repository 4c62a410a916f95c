#include "kernels/common/comm_tile_knobs.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/op_checks.hpp"

namespace tandem::kernels {

std::vector<KnobDesc> comm_tile_knobs(const std::string& mover) {
    return {KnobDesc{"comm_tile_m", {"--COMMUNICATION_TILE_M"},
                     fmt::format("rows of a comm tile, the unit the {} moves through UB (Iris's COMMUNICATION_TILE_M; "
                                 "default: the largest divisor of base-m whose tile is <= 32 KiB)",
                                 mover),
                     {}},
            KnobDesc{"comm_tile_n", {"--COMMUNICATION_TILE_N"},
                     "columns of a comm tile (Iris's COMMUNICATION_TILE_N; default: base-n)", {}}};
}

int comm_tile_n(const OpParams& p) { return p.knob("comm_tile_n").value_or(p.base_n); }

int comm_tile_m(const OpParams& p) {
    return p.knob("comm_tile_m").value_or(collectives::comm_tile_rows(p.base_m, comm_tile_n(p), p.out_dtype));
}

std::map<std::string, int> comm_tile_effective_knobs(const OpParams& p) {
    return {{"comm_tile_m", comm_tile_m(p)}, {"comm_tile_n", comm_tile_n(p)}};
}

namespace {
// The divisor of n nearest to v (the smaller on a tie): the nearest comm tile that divides a GEMM tile.
int nearest_divisor(int n, int v) {
    int best = 1;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0 && std::abs(d - v) < std::abs(best - v)) best = d;
    return best;
}
}  // namespace

void check_comm_tile(const OpParams& p, const BufferLimits& lim, const std::string& ub_note) {
    check_knob_range(p, "comm_tile_m", 1, p.base_m, "a comm tile has");
    check_knob_range(p, "comm_tile_n", 1, p.base_n, "a comm tile has");
    const int cm = comm_tile_m(p);
    const int cn = comm_tile_n(p);
    if (p.base_m % cm != 0) {
        throw ParamError({ParamValue::knob("comm_tile_m", cm)},
                         fmt::format("must divide base-m = {} (a GEMM tile is sent in whole comm tiles)", p.base_m),
                         {ParamValue::knob("comm_tile_m", nearest_divisor(p.base_m, cm))});
    }
    if (p.base_n % cn != 0) {
        throw ParamError({ParamValue::knob("comm_tile_n", cn)},
                         fmt::format("must divide base-n = {} (a GEMM tile is sent in whole comm tiles)", p.base_n),
                         {ParamValue::knob("comm_tile_n", nearest_divisor(p.base_n, cn))});
    }
    const double ub = collectives::scatter_ub_bytes(cm, cn, dtype_bytes(p.out_dtype));
    if (ub > static_cast<double>(lim.ub_bytes)) {
        throw ParamError({ParamValue::knob("comm_tile_m", cm), ParamValue::knob("comm_tile_n", cn)},
                         fmt::format("four {}x{} {} comm tiles{} take {:.0f} bytes of UB, more than the {} bytes of {}",
                                     cm, cn, dtype_name(p.out_dtype), ub_note, ub, lim.ub_bytes, lim.profile_name),
                         {ParamValue::knob("comm_tile_m", collectives::comm_tile_rows(p.base_m, cn, p.out_dtype))});
    }
}

}  // namespace tandem::kernels
