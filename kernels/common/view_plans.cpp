#include "kernels/common/view_plans.hpp"

#include <utility>

namespace tandem::kernels {

HostAction in_order(HostAction first, HostAction second) {
    if (!first) return second;
    if (!second) return first;
    return [first = std::move(first), second = std::move(second)](HostContext& host) {
        first(host);
        second(host);
    };
}

ViewPlan gemm_then_comm_view(ViewKind kind, const GemmThenComm& parts, const std::function<ViewPlan()>& pipelined) {
    ViewPlan plan;
    switch (kind) {
        case ViewKind::ComputeOnly:
            plan.reset = parts.reset;
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {parts.gemm}}};
            break;
        case ViewKind::Sequential:
            plan.reset = in_order(parts.comm_reset, parts.reset);
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {parts.gemm}}, ViewPhase{PhaseRole::Comm, {}, {parts.comm}}};
            break;
        case ViewKind::Pipelined:
            plan = pipelined();
            break;
    }
    return plan;
}

ViewPlan launched_together(HostAction reset, std::vector<StreamLaunch> launches) {
    return ViewPlan{std::move(reset), {ViewPhase{PhaseRole::Both, {}, std::move(launches)}}};
}

}  // namespace tandem::kernels
