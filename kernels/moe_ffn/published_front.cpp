// The published MegaMoE kernel's FrontReorder (published_front.hpp; README.md "The published
// FrontReorder"), in tile code.
#include "kernels/moe_ffn/published_front.hpp"

#include <algorithm>

#include "kernels/common/int_math.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

namespace {
// The published sort limits: UB holds 192 KiB; a sort chunk at most 6144 keys.
constexpr std::int64_t kSortUbBytes = 192 * 1024;

}  // namespace

SortPath sort_path(const MoeShape& s) {
    const int R = s.routes();
    if (R <= kSortChunk && 36LL * round_up(R, 32) + 4 * 128 + 13LL * s.k + 64 <= kSortUbBytes) return SortPath::FullLoad;
    return R <= kSortChunk ? SortPath::OneCore : SortPath::MultiCore;
}

const char* sort_path_name(SortPath p) {
    switch (p) {
        case SortPath::FullLoad: return "FullLoad";
        case SortPath::OneCore: return "OneCore";
        case SortPath::MultiCore: return "MultiCore";
    }
    return "?";
}

Task published_front_reorder(BlockCtx& blk, const MoeRank& a, int clusters, int v) {
    blk.set_stage(kStageFront);
    const MoeShape& s = a.tables->shape;
    const int R = s.routes(), aivs = 2 * clusters;
    const Crew all{v, aivs};
    const SortPath path = sort_path(s);
    if (path == SortPath::FullLoad) {
        // Every active AIV repeats the whole sort in UB (by expert, then the inverse by route).
        const int per = ceil_div(R, aivs);
        const int active = ceil_div(R, per);
        if (v < active) {
            co_await sort_keys(blk, a, 0, R, 2, false);
            if (v == 0) co_await store_row_index(blk, a, 0, R, false);
            if (v == active - 1) co_await store_token_counts(blk, a, 0, R, false);
            co_await quantize_routes(blk, a, v * per, std::min(R, (v + 1) * per));
        }
        co_await syncall(blk);
    } else {
        if (path == SortPath::OneCore) {
            if (v == 0) co_await sort_keys(blk, a, 0, R, 1, true);
        } else {
            // MultiCore: 4^ceil(log4(runs)) sort AIVs (at most 2C) sort their runs into GM, then
            // AIV0 merges at most four runs at a time (more runs: merge rounds, each a SYNCALL).
            int sorters = 1;
            while (sorters < ceil_div(R, kSortChunk)) sorters *= 4;
            sorters = std::min(sorters, aivs);
            const auto [k0, k1] = share(R, Crew{std::min(v, sorters - 1), sorters});
            if (v < sorters) co_await sort_keys(blk, a, k0, k1 - k0, 1, true);
            for (int runs = sorters; runs > 4; runs = (runs + 3) / 4) {
                co_await syncall(blk);
                const int groups = (runs + 3) / 4;
                const auto [m0, m1] = share(R, Crew{std::min(v, groups - 1), groups});
                if (v < groups) co_await merge_sorted_runs(blk, a, m0, m1 - m0);
            }
            co_await syncall(blk);
            if (v == 0) co_await merge_sorted_runs(blk, a, 0, R);
        }
        co_await syncall(blk);
        // (a) counts (an atomic add per AIV), (b) the inverse, one element per store, (c) quant.
        const auto [j0, j1] = share(R, all);
        co_await store_token_counts(blk, a, j0, j1, true);
        co_await syncall(blk);
        co_await store_row_index(blk, a, j0, j1, true);
        co_await syncall(blk);
        co_await quantize_routes(blk, a, j0, j1);
        co_await syncall(blk);
    }
    // Count-as-flag: AIV i sends this rank's count row to rank i and waits for rank i's; then the
    // prefix sums (preSumBeforeRank per peer, cumsumMM on AIV0), each followed by a SYNCALL.
    co_await send_count_rows(blk, a, all, true);
    for (int i = v; i < s.ranks; i += aivs) {
        if (i == a.rank) continue;
        co_await TWAIT(blk, a.slot(a.slots->count_landed, i), CmpOp::GE, 1);
        TSCALAR(blk, s.global_experts());
    }
    co_await syncall(blk);
    if (v == 0) TSCALAR(blk, std::int64_t{s.ranks} * s.experts);
    co_await syncall(blk);
}


}  // namespace tandem::kernels::moe
