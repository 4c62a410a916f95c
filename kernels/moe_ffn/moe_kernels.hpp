#pragma once
// moe_ffn's two simple schedules (README.md "Variants"): `bulk` runs each stage to completion,
// one launch after another; `per_expert` launches the five stage kernels together, each on its
// own core group, handing experts on through one counter per stage and expert (a block adds 1
// once its share of expert e has landed; the next stage waits until every block has). The
// published kernel's own two schedules are expert_major.hpp and baseline.hpp.
#include <memory>

#include "kernels/moe_ffn/moe_rank.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::moe {

// Block counts of each stage (the counters' targets).
struct StageBlocks {
    int reorder = 1, dispatch = 1, gmm1 = 1, swiglu = 1, gmm2 = 1, combine = 1, unpermute = 1;
};

// What follows FrontReorder in its launch: nothing, Dispatch as moe_ffn pulls, or the rows pushed
// by their sources (moe_dispatch's `push`, which needs a layout with an inbox).
enum class ThenDispatch { None, Pull, Push };
KernelLaunch front_reorder_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, ThenDispatch then);
KernelLaunch dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
// The push: every block stores its share of the rank's sorted rows into the inboxes of the ranks
// holding their experts; an all-rank barrier (every row has landed); then every block copies its
// share of the rank's inbox to its received buffer (a remote store lands only in a window).
KernelLaunch push_dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch gmm1_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch swiglu_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch gmm2_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch combine_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_unpermute);
KernelLaunch unpermute_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);

}  // namespace tandem::kernels::moe
