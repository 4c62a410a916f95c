// matmul_all_reduce --variant ascend for the shared host: Ascend's published GEMM+AllReduce
// example with its buffers, its host resets and its three views (README.md in this folder,
// "Buffers" and "Host"):
//   * buffers per rank: the signal matrix in the window (workspace), gemm_output (M x N fp16,
//     local GM, workspace), one ready queue per compute block (local GM, workspace), and
//     reduced_output (M x N fp16 in the window): the op's output itself, which the host places
//     in the window (VariantDesc::output_in_window), at the same offset on every rank;
//   * before every view: queues rewritten; gemm_output, reduced_output and the signal matrix
//     zeroed;
//   * compute-only: the compute kernel alone; sequential: compute, synchronize, comm,
//     synchronize (the comm time includes waiting for slower ranks at the device barrier);
//     pipelined: both launched, then both synchronized.
#include "kernels/matmul_all_reduce/ascend/variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_all_reduce/ascend/ascend_ar.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;

int round_up(int v, int step) { return (v + step - 1) / step * step; }

AscendArShape shape_of(const OpParams& p) {
    return AscendArShape{p.ranks, round_up(p.m, p.base_m), p.k, round_up(p.n, p.base_n),
                         p.base_m, p.base_n, p.compute_blocks, p.comm_blocks};
}

void validate(const OpParams& c, const BufferLimits& lim) {
    check_gemm_tile(c, lim, [&lim](double bm, double bn) {
        std::vector<BufferNeed> needs = gemm_tile_needs(bm, bn, lim);
        needs.push_back({"UB", "the comm kernel's two base-m x base-n fp16 tiles (ping and pong, as published)",
                         2 * bm * bn * 2, lim.ub_bytes});
        return needs;
    });
    check_positive("--gm", "M", c.m, c.base_m, "base-m");
    check_positive("--gk", "K", c.k, c.base_n, "base-n");
    check_positive("--gn", "N", c.n, c.base_n, "base-n");
    check_multiple("--gk", "K", c.k, c.base_n, "baseK x stepKa = base-n",
                   "the K loop loads 4 slices of base-n/4 per panel and K is not padded");
    const double tiles = std::ceil(double(c.m) / c.base_m) * std::ceil(double(c.n) / c.base_n);
    if (tiles > std::numeric_limits<std::int32_t>::max()) {
        fail_check(fmt::format("--gm {} --gn {}: {:.0f} output tiles of {}x{}, more than a ready-queue entry (int32) "
                               "can name; use a smaller shape",
                               c.m, c.n, tiles, c.base_m, c.base_n));
    }
    if (c.comm_blocks < c.compute_blocks) {
        fail_check(fmt::format("--comm-blocks {}: comm block b drains compute block b's ready queue (a strict 1:1 "
                               "binding, as published), so it needs at least --compute-blocks = {} comm blocks; "
                               "nearest valid: {}",
                               c.comm_blocks, c.compute_blocks, c.compute_blocks));
    }
    if (c.comm_blocks > lim.aiv_cores) {
        fail_check(fmt::format("--comm-blocks {}: the device barrier waits for every comm block, so all must be "
                               "resident at once: at most the {} AIV cores of {}; nearest valid: {}",
                               c.comm_blocks, lim.aiv_cores, lim.profile_name, lim.aiv_cores));
    }
}

double workspace_bytes(const OpParams& p) {
    const double m = std::ceil(double(p.m) / p.base_m) * p.base_m;
    const double n = std::ceil(double(p.n) / p.base_n) * p.base_n;
    const double tiles_per_block = std::ceil(m / p.base_m * (n / p.base_n) / std::max(1, p.compute_blocks));
    return DeviceBarrierLayout::bytes_for(p.ranks) + 2.0 * m * n +
           SpscQueueSet::bytes_for(std::max(1, p.compute_blocks), tiles_per_block);
}

class AscendAllReduceRun final : public OpInstance {
public:
    explicit AscendAllReduceRun(const OpParams& p)
        : params_(p), tiling_(shape_of(p)), barrier_(p.ranks, 0),
          queues_(p.compute_blocks, tiling_.tiles_per_block(), 0), ranks_(static_cast<std::size_t>(p.ranks)) {}

    std::vector<std::string> streams() const override { return {"compute", "comm"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        const AscendArShape& s = tiling_.shape();
        RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        r.window = &gm.allocate("signal_matrix", barrier_.bytes(), /*shared=*/true);
        const GmAllocation& out = gm.allocate("gemm_output", 2LL * s.m * s.n);
        r.gemm_output = GmTensor(out, 0, s.m, s.n, s.n, DType::F16, Layout::ND);
        r.queues = &gm.allocate("ready_queues", queues_.bytes());
        r.window_base = r.window->base;
        r.queue_base = r.queues->base;
    }

    void bind(int rank, const RankTensors& t) override {
        RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        r.a = t.a;
        r.b = t.b;
        r.reduced_output = t.out;
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const AscendArArgs args = args_of(rank);
        const KernelLaunch compute = make_ascend_compute_kernel(args);
        const KernelLaunch comm = make_ascend_comm_kernel(args);
        ViewPlan plan;
        plan.reset = [this, rank](HostContext& host) { reset(host, rank); };
        switch (kind) {
            case ViewKind::ComputeOnly:
                plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, compute}}}};
                break;
            case ViewKind::Sequential:
                plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, compute}}},
                               ViewPhase{PhaseRole::Comm, {}, {{kCommStream, comm}}}};
                break;
            case ViewKind::Pipelined:
                plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kComputeStream, compute}, {kCommStream, comm}}}};
                break;
        }
        return plan;
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        const RankBuffers& r = ranks_.at(static_cast<std::size_t>(rank));
        if (address >= r.window_base && address < r.window_base + barrier_.bytes())
            return barrier_.name_of(rank, address - r.window_base);
        if (address >= r.queue_base && address < r.queue_base + queues_.bytes()) return queues_.name_of(address - r.queue_base);
        return {};
    }

private:
    struct RankBuffers {
        const GmAllocation* window = nullptr;
        const GmAllocation* queues = nullptr;
        std::int64_t window_base = 0;  // kept for signal_name, which runs after the cluster is gone
        std::int64_t queue_base = 0;
        GmTensor gemm_output;
        GmTensor a;
        GmTensor b;
        GmTensor reduced_output;
    };

    AscendArArgs args_of(int rank) const {
        const RankBuffers& mine = ranks_[static_cast<std::size_t>(rank)];
        AscendArArgs args(tiling_.shape());
        args.my_rank = rank;
        args.a = mine.a;
        args.b = mine.b;
        args.gemm_output = mine.gemm_output;
        args.queues = queues_;
        args.queue_base = mine.queue_base;
        args.barrier.layout = barrier_;
        args.barrier.my_rank = rank;
        for (const RankBuffers& r : ranks_) {
            args.reduced_output.push_back(r.reduced_output);
            args.barrier.window_bases.push_back(r.window_base);
        }
        if (params_.fault == "skip_last_k_tile") args.fault = AscendArFault::SkipLastKTile;
        if (params_.fault == "skip_partial") args.fault = AscendArFault::SkipPartial;
        return args;
    }

    // Before every view, as the example's host: queues rewritten; gemm_output, reduced_output and
    // the signal matrix zeroed (the data resets are no-ops in timing-only mode).
    void reset(HostContext& host, int rank) const {
        const RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        queues_.host_reset(host, r.queue_base);
        barrier_.host_reset(host, r.window_base);
        host.zero_device(r.gemm_output);
        host.zero_device(r.reduced_output);
    }

    OpParams params_;
    AscendArTiling tiling_;
    DeviceBarrierLayout barrier_;
    SpscQueueSet queues_;
    std::vector<RankBuffers> ranks_;
};

}  // namespace

VariantDesc ascend_all_reduce_variant() {
    VariantDesc v;
    v.name = "ascend";
    v.doc = "Ascend's published GEMM+AllReduce example: AIC tiles (fp16 via FIX) handed to AIV blocks through "
            "per-block ready queues, atomic-add reduce-scatter to tile owners, a device barrier, a row-flattened "
            "all-gather";
    v.constraints = "every rank its own A_i (M x K) and the same B; K % base-n == 0 (M padded to base-m, N to base-n); "
                    "comm blocks >= compute blocks (1:1 queues), <= AIV cores; fp16 in, fp16 out; no bias";
    v.sharding = Sharding{Split::Cols, Split::Replicated, true, Split::Replicated};
    v.dtypes = {DType::F16};
    v.out_dtypes = {DType::F16};
    v.takes_bias = false;
    v.output_in_window = true;
    // One AIV per AIC (24 + 24 on 910B1), not all 48 AIVs: the published configuration.
    v.default_comm_blocks = [](const BufferLimits& lim) { return lim.aic_cores; };
    v.faults = {"skip_last_k_tile", "skip_partial"};
    v.validate = validate;
    v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, 1}; };
    v.workspace_bytes = workspace_bytes;
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<AscendAllReduceRun>(p); };
    return v;
}

}  // namespace tandem::kernels
