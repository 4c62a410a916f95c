#pragma once
// moe_ffn's `expert_major` variant: a replica of the published MegaMoE kernel's V1
// ("expert-major", pto-isa `00f917a`; README.md "The expert_major replica"). One MIX launch of C
// clusters (C = 24 on the 910B: 24 AICs, 48 AIVs) with fixed roles:
//
//   AIC  of clusters 0..G1-1   GMM1 (all experts), then GMM2 helpers after the join
//   AIC  of clusters G1..C-1   GMM1 experts 0-1, then the GMM2 primaries
//   AIV0 of clusters 0..G1-1   FrontReorder, Dispatch (W workers), Unpermute 1 and 2
//   AIV1 of clusters 0..G1-1   FrontReorder, SwiGLU (8 or 16), Unpermute 1 and 2
//   AIV0 of clusters G1..C-1   FrontReorder, Combine (one lane per source rank), Unpermute 2
//   AIV1 of clusters G1..C-1   FrontReorder, Unpermute 2
//
// with G1 = 2C/3 (16) and C - G1 (8) primaries. Stages hand experts on through the slots of
// moe_slots.hpp: producers add an arrival, a coordinator sets the consumers' ready.
#include <memory>
#include <vector>

#include "kernels/moe_ffn/moe_rank.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels::moe {

// The published per-shape knobs (tiling_builder.cpp kCanonicalShapeSchedules; README.md).
struct ExpertMajorSchedule {
    int clusters = 24;        // C: AICs; 2C AIVs
    int gmm1_cores = 16;      // G1
    int swiglu_aivs = 16;     // AIV1s doing SwiGLU (8 at M = 16)
    int full_gmm1_experts = 2;  // GMM1 experts run on all C AICs (then the shrink to G1)
    int join_check = 13;      // from this expert on, the GMM2 primaries check whether GMM1 is done
    int combine_start = 2;    // Combine starts once GMM2 has finished this expert
    int unpermute_cut = 13;   // Unpermute phase 1: tokens whose routes all went below this local expert
    bool canonical = false;   // the shape is in the published table
};
ExpertMajorSchedule expert_major_schedule(const MoeShape& s, int clusters);

// The MIX launch of one rank. `ffn_only` (the compute-only view): the GMM and SwiGLU parts
// alone, every expert's tokens already in place (the host sets gmm1_ready).
KernelLaunch expert_major_kernel(const std::shared_ptr<const MoeRank>& a, const ExpertMajorSchedule& sc, bool ffn_only);

}  // namespace tandem::kernels::moe
