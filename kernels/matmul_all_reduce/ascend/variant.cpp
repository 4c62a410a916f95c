// matmul_all_reduce --variant ascend for the shared host: Ascend's published GEMM+AllReduce
// example with its buffers, its host resets and its three views (README.md in this folder, "Buffers"
// and "Host"; replica.hpp: what it shares with ascend_subtile). Its signal words are
// the device barrier's signal matrix; the sequential view's comm time includes waiting for
// slower ranks at the device barrier.
#include "kernels/matmul_all_reduce/ascend/variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"
#include "kernels/matmul_all_reduce/ascend/replica.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

void validate(const OpParams& c, const BufferLimits& lim) {
    check_gemm_tile(c, lim, [&lim](double bm, double bn) { return gemm_tile_and_ping_pong_needs(bm, bn, lim); });
    check_ascend_shape(c);
    const double tiles = std::ceil(double(c.m) / c.base_m) * std::ceil(double(c.n) / c.base_n);
    if (tiles > std::numeric_limits<std::int32_t>::max()) {
        throw ParamError({{kParamM, c.m}, {kParamN, c.n}},
                         fmt::format("{:.0f} output tiles of {}x{}, more than a ready-queue entry (int32) can name; use "
                                     "a smaller shape",
                                     tiles, c.base_m, c.base_n));
    }
    if (c.comm_blocks < c.compute_blocks) {
        throw ParamError({{kParamCommBlocks, c.comm_blocks}},
                         fmt::format("comm block b drains compute block b's ready queue (a strict 1:1 binding, as "
                                     "published), so it needs at least {} = {} comm blocks",
                                     mention(kParamComputeBlocks), c.compute_blocks),
                         {{kParamCommBlocks, c.compute_blocks}});
    }
    check_comm_blocks_resident(c, lim, "the device barrier waits for every comm block");
}

double workspace_bytes(const OpParams& p) { return ascend_workspace_bytes(p, DeviceBarrierLayout::bytes_for(p.ranks)); }

class AscendAllReduceRun final : public AscendReplicaRun {
public:
    explicit AscendAllReduceRun(const OpParams& p)
        : AscendReplicaRun(p, DeviceBarrierLayout(p.ranks, 0).bytes(), AscendArTiling(ascend_shape_of(p)).tiles_per_block()),
          barrier_(p.ranks, 0) {}

protected:
    std::pair<KernelLaunch, KernelLaunch> kernels(int rank) const override {
        const AscendArArgs args = args_of(rank);
        return {make_ascend_compute_kernel(args), make_ascend_comm_kernel(args)};
    }
    // Its launcher synchronizes the comm stream inside; the newer version's launchCommAsync does
    // not (the newer version's description, "Host-side changes": "the old launcher synchronised
    // the comm stream inside").
    bool comm_launch_synchronizes() const override { return true; }
    void reset_signals(HostContext& host, std::int64_t base) const override { barrier_.host_reset(host, base); }
    std::string signal_name_at(int rank, std::int64_t offset) const override { return barrier_.name_of(rank, offset); }

private:
    AscendArArgs args_of(int rank) const {
        AscendArArgs args(ascend_shape_of(params()));
        set_rank_operands(args, rank);
        args.barrier.layout = barrier_;
        args.barrier.my_rank = rank;
        for (const RankBuffers& r : ranks()) args.barrier.window_bases.push_back(r.signal_base);
        if (params().fault == "skip_last_k_tile") args.fault = AscendArFault::SkipLastKTile;
        if (params().fault == "skip_partial") args.fault = AscendArFault::SkipPartial;
        return args;
    }

    DeviceBarrierLayout barrier_;
};

}  // namespace

VariantDesc ascend_all_reduce_variant(const VariantDesc& op_defaults) {
    VariantDesc v = derive_variant(ascend_replica_defaults(op_defaults), "ascend",
                                   "Ascend's published GEMM+AllReduce example: AIC tiles (fp16 via FIX) handed to AIV "
                                   "blocks through per-block ready queues, atomic-add reduce-scatter to tile owners, a "
                                   "device barrier, a row-flattened all-gather");
    v.constraints = "every rank its own A_i (M x K) and the same B; K % base-n == 0 (M padded to base-m, N to base-n); "
                    "comm blocks >= compute blocks (1:1 queues), <= AIV cores; fp16 in, fp16 out; no bias";
    v.faults = {"skip_last_k_tile", "skip_partial"};
    v.validate = validate;
    v.workspace_bytes = workspace_bytes;
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<AscendAllReduceRun>(p); };
    return v;
}

}  // namespace tandem::kernels
