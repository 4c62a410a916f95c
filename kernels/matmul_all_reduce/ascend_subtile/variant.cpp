// matmul_all_reduce --variant ascend_subtile for the shared host: the newer version of Ascend's
// GEMM+AllReduce example with its buffers, its host resets and its three views
// (ascend/replica.hpp: what it shares with ascend). Its signal words are the signal matrix
// (signal_layout.hpp), one ready queue has ceil(T / B) slots per compute block.
// The published host also prints a "compute-done" time from device events around the compute
// launch of the pipelined run; Tandem's host reports the three views only (README.md here).
#include "kernels/matmul_all_reduce/ascend_subtile/variant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_all_reduce/ascend/replica.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

constexpr int kDefaultSubM = 64;  // CONFIG_COMM_SUB_M of the published build
const char* const kSubMKnob = "comm_sub_m";

int sub_m_of(const OpParams& p) { return p.knob(kSubMKnob).value_or(kDefaultSubM); }

// The divisor of `base_m` nearest to `v` (ties go up).
int nearest_divisor(int base_m, int v) {
    int best = base_m;
    for (int d = 1; d <= base_m; ++d) {
        if (base_m % d != 0) continue;
        const int dist = std::abs(d - v);
        const int bestDist = std::abs(best - v);
        if (dist < bestDist || (dist == bestDist && d > best)) best = d;
    }
    return best;
}

// UB the comm kernel takes: RS ping, RS pong and the AG buffer, each sub_m x base_n fp16.
double ub_bytes_for(int sub_m, int base_n) { return 3.0 * sub_m * base_n * 2; }

void validate(const OpParams& c, const BufferLimits& lim) {
    const int subM = sub_m_of(c);
    if (subM < 1 || c.base_m % subM != 0) {
        throw ParamError({ParamValue::knob("comm_sub_m", subM)},
                         fmt::format("the comm kernel sends a tile as base-m / comm-sub-m stripes, so comm-sub-m must "
                                     "divide base-m = {}",
                                     c.base_m),
                         {ParamValue::knob("comm_sub_m", nearest_divisor(c.base_m, std::max(1, subM)))});
    }
    check_gemm_tile(c, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
    if (ub_bytes_for(subM, c.base_n) > double(lim.ub_bytes)) {
        int fits = 0;  // the largest divisor of base-m whose buffers fit
        for (int d = 1; d <= c.base_m; ++d)
            if (c.base_m % d == 0 && ub_bytes_for(d, c.base_n) <= double(lim.ub_bytes)) fits = d;
        throw ParamError({ParamValue::knob("comm_sub_m", subM)},
                         fmt::format("the comm kernel's three comm-sub-m x base-n fp16 UB buffers (RS ping, RS pong, "
                                     "AG, as published) take {:.0f} bytes, more than the {} bytes of UB of {}",
                                     ub_bytes_for(subM, c.base_n), lim.ub_bytes, lim.profile_name),
                         {ParamValue::knob("comm_sub_m", fits)});
    }
    check_ascend_shape(c);
    const double tiles = std::ceil(double(c.m) / c.base_m) * std::ceil(double(c.n) / c.base_n);
    if (tiles * (c.base_m / subM) > std::numeric_limits<std::int32_t>::max() / 4) {
        throw ParamError({{kParamM, c.m}, {kParamN, c.n}},
                         fmt::format("{:.0f} output tiles of {}x{} in {}-row subtiles need more subtile_ready slots "
                                     "than the signal matrix can address; use a smaller shape",
                                     tiles, c.base_m, c.base_n, subM));
    }
    check_comm_blocks_resident(c, lim, "a comm block's all-gather waits for subtiles the other ranks' comm blocks reduce");
}

double workspace_bytes(const OpParams& p) {
    const double spt = std::max(1, p.base_m / std::max(1, sub_m_of(p)));
    return ascend_workspace_bytes(p, SubtileSignalLayout::bytes_for(ascend_output_tiles(p), spt, p.comm_blocks));
}

class SubtileAllReduceRun final : public AscendReplicaRun {
public:
    explicit SubtileAllReduceRun(const OpParams& p) : SubtileAllReduceRun(p, SubtileArArgs(ascend_shape_of(p), sub_m_of(p))) {}

protected:
    std::pair<KernelLaunch, KernelLaunch> kernels(int rank) const override {
        const SubtileArArgs args = args_of(rank);
        return {make_subtile_compute_kernel(args), make_subtile_comm_kernel(args)};
    }
    // The whole signal matrix, as the example's host (ResetDeviceState).
    void reset_signals(HostContext& host, std::int64_t base) const override { proto_.signals.host_reset(host, base); }
    std::string signal_name_at(int, std::int64_t offset) const override { return proto_.signals.name_of(offset); }

private:
    SubtileAllReduceRun(const OpParams& p, const SubtileArArgs& proto)
        : AscendReplicaRun(p, proto.signals.bytes(), proto.tiling.queue_capacity()), proto_(proto) {}

    SubtileArArgs args_of(int rank) const {
        SubtileArArgs args = proto_;
        set_rank_operands(args, rank);
        for (const RankBuffers& r : ranks()) args.signal_bases.push_back(r.signal_base);
        if (params().fault == "skip_last_k_tile") args.fault = SubtileArFault::SkipLastKTile;
        if (params().fault == "skip_subtile_add") args.fault = SubtileArFault::SkipSubtileAdd;
        if (params().fault == "ready_before_store") args.fault = SubtileArFault::ReadyBeforeStore;
        return args;
    }

    SubtileArArgs proto_;  // the tiling and the signal layout, shared by every rank
};

}  // namespace

VariantDesc ascend_subtile_all_reduce_variant(const VariantDesc& op_defaults) {
    VariantDesc v = derive_variant(ascend_replica_defaults(op_defaults), "ascend_subtile",
                                   "the newer Ascend GEMM+AllReduce example: balanced AIC tile split, ready queues "
                                   "drained round-robin, half-tile atomic-add reduce-scatter with per-subtile ready "
                                   "counters, all-gather of each owned subtile as soon as every rank's add has landed, "
                                   "interleaved in one AIV loop with no barrier");
    v.constraints = "every rank its own A_i (M x K) and the same B; K % base-n == 0 (M padded to base-m, N to base-n); "
                    "comm-sub-m divides base-m; comm blocks <= AIV cores; fp16 in, fp16 out; no bias";
    v.knobs = {KnobDesc{kSubMKnob, {}, "ascend_subtile: rows of the comm kernel's reduce-scatter / all-gather unit, "
                                       "divides base-m (default 64, as published)", {}}};
    v.faults = {"skip_last_k_tile", "skip_subtile_add", "ready_before_store"};
    v.validate = validate;
    v.workspace_bytes = workspace_bytes;
    v.effective_knobs = [](const OpParams& p) { return std::map<std::string, int>{{kSubMKnob, sub_m_of(p)}}; };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<SubtileAllReduceRun>(p); };
    return v;
}

}  // namespace tandem::kernels
