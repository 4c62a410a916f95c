#pragma once
// The published MegaMoE kernel's FrontReorder, shared by its two replicas (expert_major and
// baseline; README.md "The published FrontReorder"): on all 2C AIVs of the MIX launch, the sort
// path the published host picks by R = M x topK and K (FullLoad: every active AIV sorts all R in
// UB; OneCore: AIV0 sorts; MultiCore: 4^n sort AIVs, then merges), then the count steps, the
// per-token quant and one packed row per route, count-as-flag with every peer, and the prefix
// sums, with the published SYNCALL<AIVOnly>s (3, 6 or 7).
#include "kernels/moe_ffn/moe_rank.hpp"
#include "sim/exec/task.hpp"

namespace tandem {
class BlockCtx;
}

namespace tandem::kernels::moe {

enum class SortPath { FullLoad, OneCore, MultiCore };
SortPath sort_path(const MoeShape& s);
const char* sort_path_name(SortPath p);

// AIV v of the launch's 2 x `clusters`.
Task published_front_reorder(BlockCtx& blk, const MoeRank& a, int clusters, int v);

}  // namespace tandem::kernels::moe
