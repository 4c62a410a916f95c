// matmul_all_reduce --variant ascend_subtile for the shared host: the newer version of Ascend's
// GEMM+AllReduce example with its buffers, its host resets and its three views:
//   * buffers per rank: the signal matrix in the window (signal_layout.hpp; workspace),
//     gemm_output (M x N fp16, local GM, workspace), one ready queue of ceil(T / B) slots per
//     compute block (local GM, workspace), and reduced_output (M x N fp16): the op's output,
//     which the host places in the window (VariantDesc::output_in_window), at the same offset
//     on every rank;
//   * before every view: queues rewritten; gemm_output, reduced_output and the whole signal
//     matrix zeroed (the data resets are no-ops in timing-only mode);
//   * compute-only: the compute kernel alone; sequential: compute, synchronize, comm,
//     synchronize; pipelined: compute launched, comm launched, both synchronized.
// The published host also prints a "compute-done" time from device events around the compute
// launch of the pipelined run; Tandem's host reports the three views only (README.md here).
#include "kernels/matmul_all_reduce/ascend_subtile/variant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;
constexpr int kDefaultSubM = 64;  // CONFIG_COMM_SUB_M of the published build
const char* const kSubMKnob = "comm_sub_m";

int round_up(int v, int step) { return (v + step - 1) / step * step; }

int sub_m_of(const OpParams& p) { return p.knob(kSubMKnob).value_or(kDefaultSubM); }

AscendArShape shape_of(const OpParams& p) {
    return AscendArShape{p.ranks, round_up(p.m, p.base_m), p.k, round_up(p.n, p.base_n),
                         p.base_m, p.base_n, p.compute_blocks, p.comm_blocks};
}

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
        fail_check(fmt::format("--comm-sub-m {}: the comm kernel sends a tile as base-m / comm-sub-m stripes, so "
                               "comm-sub-m must divide base-m = {}; nearest valid: {}",
                               subM, c.base_m, nearest_divisor(c.base_m, std::max(1, subM))));
    }
    check_gemm_tile(c, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
    if (ub_bytes_for(subM, c.base_n) > double(lim.ub_bytes)) {
        int fits = 0;  // the largest divisor of base-m whose buffers fit
        for (int d = 1; d <= c.base_m; ++d)
            if (c.base_m % d == 0 && ub_bytes_for(d, c.base_n) <= double(lim.ub_bytes)) fits = d;
        fail_check(fmt::format("--comm-sub-m {}: the comm kernel's three comm-sub-m x base-n fp16 UB buffers (RS ping, "
                               "RS pong, AG, as published) take {:.0f} bytes, more than the {} bytes of UB of {}; "
                               "nearest valid: {}",
                               subM, ub_bytes_for(subM, c.base_n), lim.ub_bytes, lim.profile_name, fits));
    }
    check_positive("--gm", "M", c.m, c.base_m, "base-m");
    check_positive("--gk", "K", c.k, c.base_n, "base-n");
    check_positive("--gn", "N", c.n, c.base_n, "base-n");
    check_multiple("--gk", "K", c.k, c.base_n, "baseK x stepKa = base-n",
                   "the K loop loads 4 slices of base-n/4 per panel and K is not padded");
    const double tiles = std::ceil(double(c.m) / c.base_m) * std::ceil(double(c.n) / c.base_n);
    if (tiles * (c.base_m / subM) > std::numeric_limits<std::int32_t>::max() / 4) {
        fail_check(fmt::format("--gm {} --gn {}: {:.0f} output tiles of {}x{} in {}-row subtiles need more "
                               "subtile_ready slots than the signal matrix can address; use a smaller shape",
                               c.m, c.n, tiles, c.base_m, c.base_n, subM));
    }
    if (c.comm_blocks > lim.aiv_cores) {
        fail_check(fmt::format("--comm-blocks {}: a comm block's all-gather waits for subtiles the other ranks' comm "
                               "blocks reduce, so all must be resident at once: at most the {} AIV cores of {}; "
                               "nearest valid: {}",
                               c.comm_blocks, lim.aiv_cores, lim.profile_name, lim.aiv_cores));
    }
}

double workspace_bytes(const OpParams& p) {
    const double m = std::ceil(double(p.m) / p.base_m) * p.base_m;
    const double n = std::ceil(double(p.n) / p.base_n) * p.base_n;
    const double tiles = m / p.base_m * (n / p.base_n);
    const double capacity = std::ceil(tiles / std::max(1, p.compute_blocks));
    const double spt = std::max(1, p.base_m / std::max(1, sub_m_of(p)));
    return SubtileSignalLayout::bytes_for(tiles, spt, p.comm_blocks) + 2.0 * m * n +
           SpscQueueSet::bytes_for(std::max(1, p.compute_blocks), capacity);
}

class SubtileAllReduceRun final : public OpInstance {
public:
    explicit SubtileAllReduceRun(const OpParams& p)
        : params_(p), proto_(shape_of(p), sub_m_of(p)),
          queues_(p.compute_blocks, proto_.tiling.queue_capacity(), 0), ranks_(static_cast<std::size_t>(p.ranks)) {}

    std::vector<std::string> streams() const override { return {"compute", "comm"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        const AscendArShape& s = proto_.tiling.shape();
        RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        r.signal_base = gm.allocate("signal_matrix", proto_.signals.bytes(), /*shared=*/true).base;
        const GmAllocation& out = gm.allocate("gemm_output", 2LL * s.m * s.n);
        r.gemm_output = GmTensor(out, 0, s.m, s.n, s.n, DType::F16, Layout::ND);
        r.queue_base = gm.allocate("ready_queues", queues_.bytes()).base;
    }

    void bind(int rank, const RankTensors& t) override {
        RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        r.a = t.a;
        r.b = t.b;
        r.reduced_output = t.out;
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const SubtileArArgs args = args_of(rank);
        const KernelLaunch compute = make_subtile_compute_kernel(args);
        const KernelLaunch comm = make_subtile_comm_kernel(args);
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
        if (address >= r.signal_base && address < r.signal_base + proto_.signals.bytes())
            return proto_.signals.name_of(address - r.signal_base);
        if (address >= r.queue_base && address < r.queue_base + queues_.bytes())
            return queues_.name_of(address - r.queue_base);
        return {};
    }

private:
    struct RankBuffers {
        std::int64_t signal_base = 0;  // kept for signal_name, which runs after the cluster is gone
        std::int64_t queue_base = 0;
        GmTensor gemm_output;
        GmTensor a;
        GmTensor b;
        GmTensor reduced_output;
    };

    SubtileArArgs args_of(int rank) const {
        const RankBuffers& mine = ranks_[static_cast<std::size_t>(rank)];
        SubtileArArgs args = proto_;
        args.my_rank = rank;
        args.a = mine.a;
        args.b = mine.b;
        args.gemm_output = mine.gemm_output;
        args.queues = queues_;
        args.queue_base = mine.queue_base;
        for (const RankBuffers& r : ranks_) {
            args.reduced_output.push_back(r.reduced_output);
            args.signal_bases.push_back(r.signal_base);
        }
        if (params_.fault == "skip_last_k_tile") args.fault = SubtileArFault::SkipLastKTile;
        if (params_.fault == "skip_subtile_add") args.fault = SubtileArFault::SkipSubtileAdd;
        if (params_.fault == "ready_before_store") args.fault = SubtileArFault::ReadyBeforeStore;
        return args;
    }

    // Before every view, as the example's host (ResetDeviceState).
    void reset(HostContext& host, int rank) const {
        const RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
        queues_.host_reset(host, r.queue_base);
        proto_.signals.host_reset(host, r.signal_base);
        host.zero_device(r.gemm_output);
        host.zero_device(r.reduced_output);
    }

    OpParams params_;
    SubtileArArgs proto_;  // the tiling and the signal layout, shared by every rank
    SpscQueueSet queues_;
    std::vector<RankBuffers> ranks_;
};

}  // namespace

VariantDesc ascend_subtile_all_reduce_variant() {
    VariantDesc v;
    v.name = "ascend_subtile";
    v.doc = "the newer Ascend GEMM+AllReduce example: balanced AIC tile split, ready queues drained round-robin, "
            "half-tile atomic-add reduce-scatter with per-subtile ready counters, all-gather of each owned subtile "
            "as soon as every rank's add has landed, interleaved in one AIV loop with no barrier";
    v.constraints = "every rank its own A_i (M x K) and the same B; K % base-n == 0 (M padded to base-m, N to base-n); "
                    "comm-sub-m divides base-m; comm blocks <= AIV cores; fp16 in, fp16 out; no bias";
    v.sharding = Sharding{Split::Cols, Split::Replicated, true, Split::Replicated};
    v.dtypes = {DType::F16};
    v.out_dtypes = {DType::F16};
    v.takes_bias = false;
    v.output_in_window = true;
    v.knobs = {KnobDesc{kSubMKnob, {}, "ascend_subtile: rows of the comm kernel's reduce-scatter / all-gather unit, "
                                       "divides base-m (default 64, as published)", {}}};
    // One AIV per AIC (24 + 24 on 910B1), as published.
    v.default_comm_blocks = [](const BufferLimits& lim) { return lim.aic_cores; };
    v.faults = {"skip_last_k_tile", "skip_subtile_add", "ready_before_store"};
    v.validate = validate;
    v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, 1}; };
    v.workspace_bytes = workspace_bytes;
    v.effective_knobs = [](const OpParams& p) { return std::map<std::string, int>{{kSubMKnob, sub_m_of(p)}}; };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<SubtileAllReduceRun>(p); };
    return v;
}

}  // namespace tandem::kernels
