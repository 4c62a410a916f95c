// gemm --variant tiled: the GEMM kernel of the fused ops, alone: the shared K loop
// (kernels/common/gemm_tile_pipeline.hpp) over base-m x base-n output tiles, scheduled as
// --schedule says (kernels/common/gemm_schedule.hpp). It is matmul_all_reduce's compute-only
// kernel: MatmulPartialKernel (data_parallel, AIC) or MatmulPartialStreamKKernel (stream_k,
// hybrid: MIX, fix-ups on the AIVs), here with every rank adding the bias to its own C. Any shape
// runs: M, N and K are padded to whole tiles by the host, as for the fused ops.
#include <cmath>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/common/summed_gemm.hpp"
#include "kernels/gemm/gemm_run.hpp"
#include "kernels/gemm/variants.hpp"

namespace tandem::kernels::gemm {

namespace {

GemmSchedule schedule_of(const OpParams& p) {
    const int tiles = ceil_div(p.m, p.base_m) * ceil_div(p.n, p.base_n);
    return GemmSchedule(parse_gemm_schedule(p.schedule), tiles, k_panels_of(p.k, p.base_n, p.dtype),
                        std::max(1, p.compute_blocks));
}

// The stream-K partials and their flags (none for data_parallel).
std::int64_t stream_k_bytes(const OpParams& p) {
    if (p.schedule == "data_parallel") return 0;
    return stream_k_layout(schedule_of(p), p.base_m, p.base_n).bytes;
}

void validate_tiled(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_int8_rules(p);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    check_stream_k_blocks(p, lim);
    check_positive(kParamM, p.m, p.base_m, "base-m");
    check_positive(kParamK, p.k, p.base_n, "base-n");
    check_positive(kParamN, p.n, p.base_n, "base-n");
}

class TiledRun final : public GemmRun {
public:
    explicit TiledRun(const OpParams& p) : GemmRun(p), workspace_(static_cast<std::size_t>(p.ranks), nullptr) {}

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        if (stream_k_bytes(params()) > 0)
            workspace_[static_cast<std::size_t>(rank)] = &gm.allocate("gemm_stream_k", stream_k_bytes(params()));
    }

protected:
    KernelLaunch kernel(int rank) const override {
        const SummedGemm g = gemm(rank);
        if (params().schedule == "data_parallel") return make_partial_gemm_kernel(g, tensors(rank).out, params().compute_blocks);
        TileSink sink;
        sink.targets = [grid = g.grid, c = tensors(rank).out](int t) { return std::vector<GmTensor>{grid.c_tile(c, t)}; };
        return make_stream_k_gemm_kernel("MatmulPartialStreamKKernel", stream_k_gemm(rank), sink);
    }

    HostAction reset(int rank) const override {
        if (params().schedule == "data_parallel") return {};
        return [sk = stream_k_gemm(rank)](HostContext& host) { reset_stream_k_counters(host, sk); };
    }

private:
    // Every rank computes its own C = A x B (+ bias): the bias is added on every rank.
    SummedGemm gemm(int rank) const {
        const RankTensors& t = tensors(rank);
        SummedGemm g{GemmGrid(t.a, t.b, params().base_m, params().base_n), {}, BiasKind::None, params().schedule};
        g.skip_last_k_panel = params().fault == "skip_last_k_panel";
        if (params().bias != BiasKind::None) {
            g.bias = t.bias;
            g.bias_kind = params().bias;
        }
        return g;
    }

    StreamKGemm stream_k_gemm(int rank) const {
        const GemmSchedule schedule = schedule_of(params());
        const StreamKLayout l = stream_k_layout(schedule, params().base_m, params().base_n);
        const SummedGemm g = gemm(rank);
        StreamKGemm sk{g.grid, schedule, g.bias, g.bias_kind, 0, params().out_dtype, GmTensor{}, SignalAddr{}};
        sk.skip_last_k_panel = g.skip_last_k_panel;
        if (l.slots > 0) {  // no split tile (e.g. one K panel): no partials, no flags, no workspace
            const GmAllocation& ws = *workspace_[static_cast<std::size_t>(rank)];
            sk.partials = GmTensor(ws, l.partials_offset, l.slots * params().base_m, params().base_n, params().base_n, DType::F32);
            sk.counters = SignalAddr{rank, ws.base + l.counters_offset};
        }
        return sk;
    }

    std::vector<const GmAllocation*> workspace_;
};

}  // namespace

VariantDesc tiled_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "tiled",
                                   "the fused ops' GEMM kernel alone (matmul_all_reduce's compute-only kernel): base-m x "
                                   "base-n tiles, the shared double-buffered K loop, --schedule data_parallel (AIC) or "
                                   "stream_k/hybrid (MIX, fix-ups on AIV)");
    v.constraints = "any M, N, K (padded to base-m, base-n, base-n); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out; bias m or n "
                    "(every rank adds it to its own C)";
    v.schedules = gemm_schedule_names();
    v.faults = {"skip_last_k_panel"};
    v.validate = validate_tiled;
    v.workspace_bytes = [](const OpParams& p) { return static_cast<double>(stream_k_bytes(p)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<TiledRun>(p); };
    return v;
}

}  // namespace tandem::kernels::gemm
