#include "kernels/gemm/gemm_run.hpp"

namespace tandem::kernels::gemm {

ViewPlan GemmRun::view(ViewKind kind, int rank) const {
    // Compute-only and sequential time the kernel as the compute part; the pipelined view is
    // the whole op, which is the same kernel.
    const PhaseRole role = kind == ViewKind::Pipelined ? PhaseRole::Both : PhaseRole::Compute;
    ViewPlan plan;
    plan.reset = reset(rank);
    plan.phases = {ViewPhase{role, {}, {{kComputeStream, kernel(rank)}}}};
    return plan;
}

}  // namespace tandem::kernels::gemm
