#pragma once
// The view plans most ops share, so that an OpInstance::view states only what is its own.
//
// GEMM then comm (matmul_all_reduce, matmul_reduce_scatter, matmul_all_gather,
// matmul_all_scatter, the Ascend GEMM+AllReduce replicas): the reference views time the op's
// two parts apart, as a user would run them without fusion:
//   compute-only: the GEMM kernel alone;
//   sequential:   the GEMM kernel, then the collective, each its own phase (the host synchronizes
//                 between them and times each: the compute and comm figures);
//   pipelined:    the variant's own plan (the fused op).
#include <functional>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels {

struct GemmThenComm {
    StreamLaunch gemm;      // compute-only's kernel; sequential's first phase
    StreamLaunch comm;      // sequential's second phase
    HostAction reset;       // untimed, before compute-only and sequential (e.g. stream-K counters)
    HostAction comm_reset;  // untimed, before sequential only, ahead of `reset` (the collective's flags)
};

// Compute-only and sequential from `parts`; pipelined is `pipelined()`, called for that view only.
ViewPlan gemm_then_comm_view(ViewKind kind, const GemmThenComm& parts, const std::function<ViewPlan()>& pipelined);

// One timed phase of `launches` started together (in this order) after the untimed `reset`:
// a fused variant's pipelined view.
ViewPlan launched_together(HostAction reset, std::vector<StreamLaunch> launches);

// Both host actions, `first` then `second` (either may be empty).
HostAction in_order(HostAction first, HostAction second);

}  // namespace tandem::kernels
