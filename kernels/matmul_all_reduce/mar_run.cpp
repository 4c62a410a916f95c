#include "kernels/matmul_all_reduce/mar_run.hpp"

#include "kernels/common/collectives/all_reduce.hpp"

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

double mar_workspace_bytes(const OpParams& p, double variant_bytes) {
    return static_cast<double>(align32(baseline_layout(p).bytes())) + variant_bytes;
}

MarRun::MarRun(const OpParams& p, std::int64_t variant_bytes)
    : params_(p), layout_(baseline_layout(p)), variant_offset_(align32(layout_.bytes())), variant_bytes_(variant_bytes),
      workspace_(static_cast<std::size_t>(p.ranks), nullptr), tensors_(static_cast<std::size_t>(p.ranks)) {}

void MarRun::allocate_workspace(int rank, GlobalMemory& gm) {
    workspace_[static_cast<std::size_t>(rank)] =
        &gm.allocate("mar_workspace", variant_offset_ + variant_bytes_, /*shared=*/true);
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

ViewPlan MarRun::view(ViewKind kind, int rank) const {
    const KernelLaunch gemm_kernel = make_partial_gemm_kernel(gemm(rank), tensors(rank).out, params_.compute_blocks);
    ViewPlan plan;
    switch (kind) {
        case ViewKind::ComputeOnly:
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, gemm_kernel}}}};
            break;
        case ViewKind::Sequential: {
            const collectives::CollectiveArgs args = baseline_args(rank);
            plan.reset = [args](HostContext& host) { collectives::reset_collective_flags(host, args); };
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
