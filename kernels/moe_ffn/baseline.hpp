#pragma once
// moe_ffn's `baseline` variant: a replica of the published MegaMoE kernel's first version (pto-isa
// `7096158`..`2d9d428`, the version overview.md's figures show; README.md "The baseline
// replica"). One MIX launch of C clusters where the cores work stage by stage:
//
//   AIVs  FrontReorder (as V1), Dispatch expert by expert (W copy AIVs, a SYNCALL<AIVOnly> per
//         expert), SwiGLU per segment, Combine per expert, SYNCALL + CrossRankSync, Unpermute
//   AICs  GMM1 on all C for every expert, then GMM2 on all C
//
// handing work over with FFTS hard flags (mode 2, within a cluster): Dispatch -> GMM1 per expert,
// GMM1 -> SwiGLU and SwiGLU -> GMM2 per segment (experts [0, cut) and [cut, E)), GMM2 -> Combine
// per expert. The producing side first SYNCALLs its own cores, so a cluster's flag stands for all.
#include <memory>

#include "kernels/moe_ffn/moe_rank.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::moe {

struct BaselineSchedule {
    int clusters = 24;      // C: AICs; 2C AIVs
    int segment_cut = 13;   // the two SwiGLU segments, experts [0, cut) and [cut, E) (moe_swiglu_segment.hpp)
    bool small_combine = true;  // M x topK <= 4096: Combine by 16 x 256 sub-tiles, else by rows, 2 lanes per source
};
BaselineSchedule baseline_schedule(const MoeShape& s, int clusters);

// The MIX launch of one rank; `ffn_only` (compute-only): GMM1, SwiGLU and GMM2 with every
// expert's tokens in place.
KernelLaunch baseline_kernel(const std::shared_ptr<const MoeRank>& a, const BaselineSchedule& sc, bool ffn_only);

}  // namespace tandem::kernels::moe
