#include "kernels/matmul_all_reduce/mar_run.hpp"

#include "kernels/common/collectives/all_reduce.hpp"

#include <fmt/format.h>

namespace tandem::kernels::mar {

namespace {
int round_up(int v, int step) { return (v + step - 1) / step * step; }
std::int64_t align32(std::int64_t v) { return (v + 31) / 32 * 32; }
}  // namespace

int padded_m(const OpParams& p) { return round_up(p.m, p.base_m); }
int padded_n(const OpParams& p) { return round_up(p.n, p.base_n); }

collectives::CollectiveLayout baseline_layout(const OpParams& p) {
    const int m = padded_m(p);
    return collectives::CollectiveLayout(p.ranks, collectives::make_comm_grid(m, padded_n(p), p.out_dtype, m),
                                         p.out_dtype, std::max(1, p.comm_blocks));
}

Padding mar_padding(const OpParams& p) { return Padding{p.base_m, p.base_n, p.base_n}; }

GemmSchedule mar_schedule(const OpParams& p) {
    const int tiles = (padded_m(p) / p.base_m) * (padded_n(p) / p.base_n);
    return GemmSchedule(parse_gemm_schedule(p.schedule), tiles, round_up(p.k, p.base_n) / p.base_n,
                        std::max(1, p.compute_blocks));
}

namespace {
std::int64_t stream_k_bytes(const OpParams& p) {
    if (p.schedule == "data_parallel") return 0;
    return stream_k_layout(mar_schedule(p), p.base_m, p.base_n).bytes;
}
}  // namespace

double mar_workspace_bytes(const OpParams& p, double variant_bytes) {
    return static_cast<double>(align32(baseline_layout(p).bytes())) + align32(static_cast<std::int64_t>(variant_bytes)) +
           static_cast<double>(stream_k_bytes(p));
}

MarRun::MarRun(const OpParams& p, std::int64_t variant_bytes)
    : params_(p), layout_(baseline_layout(p)), variant_offset_(align32(layout_.bytes())), variant_bytes_(variant_bytes),
      stream_k_offset_(variant_offset_ + align32(variant_bytes)),
      workspace_(static_cast<std::size_t>(p.ranks), nullptr),
      workspace_base_(static_cast<std::size_t>(p.ranks), -1), tensors_(static_cast<std::size_t>(p.ranks)) {}

void MarRun::allocate_workspace(int rank, GlobalMemory& gm) {
    workspace_[static_cast<std::size_t>(rank)] =
        &gm.allocate("mar_workspace", stream_k_offset_ + stream_k_bytes(params_), /*shared=*/true);
    workspace_base_[static_cast<std::size_t>(rank)] = workspace_[static_cast<std::size_t>(rank)]->base;
}

std::string MarRun::signal_name(int rank, std::int64_t address) const {
    if (!stream_k()) return {};
    const StreamKLayout l = stream_k_layout(mar_schedule(params_), params_.base_m, params_.base_n);
    const std::int64_t first = workspace_base_.at(static_cast<std::size_t>(rank)) + stream_k_offset_ + l.counters_offset;
    if (address < first || address >= first + 4 * std::int64_t{l.slots}) return {};
    return fmt::format("partial_ready[slot={}]", (address - first) / 4);
}

void MarRun::bind(int rank, const RankTensors& t) { tensors_[static_cast<std::size_t>(rank)] = t; }

std::vector<GmTensor> MarRun::outputs() const {
    std::vector<GmTensor> out;
    for (const RankTensors& t : tensors_) out.push_back(t.out);
    return out;
}

collectives::CollectiveArgs MarRun::baseline_args(int rank) const {
    std::vector<collectives::CollectiveWorkspace> ws;
    for (const GmAllocation* a : workspace_) ws.push_back(collectives::CollectiveWorkspace{a, 0});
    return collectives::CollectiveArgs{layout_, collectives::collective_algo_for(params_.topology), rank, outputs(), ws};
}

StreamKGemm MarRun::stream_k_gemm(int rank) const {
    const GemmSchedule schedule = mar_schedule(params_);
    const StreamKLayout l = stream_k_layout(schedule, params_.base_m, params_.base_n);
    const SummedGemm g = gemm(rank);
    const GmAllocation& ws = workspace(rank);
    StreamKGemm sk{g.grid, schedule, g.bias, g.bias_kind, 0, params_.out_dtype, GmTensor{}, SignalAddr{}};
    if (l.slots > 0) {  // no split tile (e.g. tiles a multiple of the blocks): no partials
        sk.partials = GmTensor(ws, stream_k_offset_ + l.partials_offset, l.slots * params_.base_m, params_.base_n,
                               params_.base_n, DType::F32);
    }
    sk.counters = SignalAddr{rank, ws.base + stream_k_offset_ + l.counters_offset};
    sk.skip_partial = params_.fault == "skip_fixup_partial";
    return sk;
}

HostAction MarRun::reset_stream_k(int rank) const {
    if (!stream_k()) return {};
    const StreamKGemm sk = stream_k_gemm(rank);
    return [sk](HostContext& host) { reset_stream_k_counters(host, sk); };
}

ViewPlan MarRun::view(ViewKind kind, int rank) const {
    KernelLaunch gemm_kernel;
    HostAction sk_reset = reset_stream_k(rank);
    if (stream_k()) {
        TileSink sink;
        sink.targets = [g = gemm(rank).grid, c = tensors(rank).out](int t) { return std::vector<GmTensor>{g.c_tile(c, t)}; };
        gemm_kernel = make_stream_k_gemm_kernel("MatmulPartialStreamKKernel", stream_k_gemm(rank), sink);
    } else {
        gemm_kernel = make_partial_gemm_kernel(gemm(rank), tensors(rank).out, params_.compute_blocks);
    }
    ViewPlan plan;
    switch (kind) {
        case ViewKind::ComputeOnly:
            plan.reset = sk_reset;
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, gemm_kernel}}}};
            break;
        case ViewKind::Sequential: {
            const collectives::CollectiveArgs args = baseline_args(rank);
            plan.reset = [args, sk_reset](HostContext& host) {
                collectives::reset_collective_flags(host, args);
                if (sk_reset) sk_reset(host);
            };
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, gemm_kernel}}},
                           ViewPhase{PhaseRole::Comm, {}, {{kCommStream, collectives::make_all_reduce_kernel(args)}}}};
            break;
        }
        case ViewKind::Pipelined:
            plan = pipelined_view(rank);
            break;
    }
    return plan;
}

}  // namespace tandem::kernels::mar
