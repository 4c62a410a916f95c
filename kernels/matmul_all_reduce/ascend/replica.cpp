#include "kernels/matmul_all_reduce/ascend/replica.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/common/int_math.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {
constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;
}  // namespace

VariantDesc ascend_replica_defaults(const VariantDesc& op_defaults) {
    VariantDesc v = op_defaults;
    v.sharding = Sharding{Split::Cols, Split::Replicated, true, Split::Replicated};
    v.dtypes = {DType::F16};
    v.out_dtypes = {DType::F16};
    v.takes_bias = false;
    v.output_in_window = true;
    v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, 1}; };
    // One AIV per AIC (24 + 24 on 910B1), not all 48 AIVs: the published configuration.
    v.default_comm_blocks = [](const BufferLimits& lim) { return lim.aic_cores; };
    return v;
}

AscendArShape ascend_shape_of(const OpParams& p) {
    return AscendArShape{p.ranks, round_up(p.m, p.base_m), p.k, round_up(p.n, p.base_n),
                         p.base_m, p.base_n, p.compute_blocks, p.comm_blocks};
}

double ascend_output_tiles(const OpParams& p) {
    return std::ceil(double(p.m) / p.base_m) * std::ceil(double(p.n) / p.base_n);
}

double ascend_workspace_bytes(const OpParams& p, double signal_bytes) {
    const double tiles = ascend_output_tiles(p);
    const double partial_output = 2.0 * tiles * p.base_m * p.base_n;
    const int blocks = std::max(1, p.compute_blocks);
    return signal_bytes + partial_output + SpscQueueSet::bytes_for(blocks, std::ceil(tiles / blocks));
}

void check_ascend_shape(const OpParams& c) {
    check_positive(kParamM, c.m, c.base_m, "base-m");
    check_positive(kParamK, c.k, c.base_n, "base-n");
    check_positive(kParamN, c.n, c.base_n, "base-n");
    check_multiple(kParamK, c.k, c.base_n, "baseK x stepKa = base-n",
                   "the K loop loads 4 slices of base-n/4 per panel and K is not padded");
}

AscendReplicaRun::AscendReplicaRun(const OpParams& p, std::int64_t signal_bytes, int queue_capacity)
    : params_(p), signal_bytes_(signal_bytes), queues_(p.compute_blocks, queue_capacity, 0),
      ranks_(static_cast<std::size_t>(p.ranks)) {}

void AscendReplicaRun::allocate_workspace(int rank, GlobalMemory& gm) {
    const AscendArShape s = ascend_shape_of(params_);
    RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
    r.signal_base = gm.allocate("signal_matrix", signal_bytes_, /*shared=*/true).base;
    const GmAllocation& out = gm.allocate("gemm_output", 2LL * s.m * s.n);
    r.gemm_output = GmTensor(out, 0, s.m, s.n, s.n, DType::F16, Layout::ND);
    r.queue_base = gm.allocate("ready_queues", queues_.bytes()).base;
}

void AscendReplicaRun::bind(int rank, const RankTensors& t) {
    RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
    r.a = t.a;
    r.b = t.b;
    r.reduced_output = t.out;
}

ViewPlan AscendReplicaRun::view(ViewKind kind, int rank) const {
    auto [compute, comm] = kernels(rank);
    GemmThenComm parts;
    parts.gemm = {kComputeStream, compute};
    parts.comm = {kCommStream, comm};
    parts.reset = [this, rank](HostContext& host) { reset(host, rank); };
    return gemm_then_comm_view(kind, parts, [&] {
        // Pipelined: launch compute, launch comm, synchronize compute, then comm. The older
        // example's comm launcher synchronizes the comm stream inside (comm_launch_synchronizes).
        StreamLaunch comm_launch = parts.comm;
        comm_launch.sync_after_launch = comm_launch_synchronizes();
        return launched_together(parts.reset, {parts.gemm, comm_launch});
    });
}

std::string AscendReplicaRun::signal_name(int rank, std::int64_t address) const {
    const RankBuffers& r = ranks_.at(static_cast<std::size_t>(rank));
    if (address >= r.signal_base && address < r.signal_base + signal_bytes_) return signal_name_at(rank, address - r.signal_base);
    if (address >= r.queue_base && address < r.queue_base + queues_.bytes()) return queues_.name_of(address - r.queue_base);
    return {};
}

// Before every view, as the example's host: queues rewritten; gemm_output, reduced_output and
// the signal words zeroed.
void AscendReplicaRun::reset(HostContext& host, int rank) const {
    const RankBuffers& r = ranks_[static_cast<std::size_t>(rank)];
    queues_.host_reset(host, r.queue_base);
    reset_signals(host, r.signal_base);
    host.zero_device(r.gemm_output);
    host.zero_device(r.reduced_output);
}

}  // namespace tandem::kernels
