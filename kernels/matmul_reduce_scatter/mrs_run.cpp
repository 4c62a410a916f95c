#include "kernels/matmul_reduce_scatter/mrs_run.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/common/collectives/reduce_scatter.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/view_plans.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mrs {

namespace {
// The baseline reduce-scatter over the stacked P: slice o = row block o (comm tiles never cross
// a row block: their rows divide the padded M).
collectives::CollectiveLayout baseline_layout(const OpParams& p) {
    const int m = padded_m(p);
    return collectives::CollectiveLayout(p.ranks, collectives::make_comm_grid(p.ranks * m, p.n / p.ranks, p.out_dtype, m),
                                         p.out_dtype, std::max(1, p.comm_blocks));
}

TileMap tile_map_of(const OpParams& p) {
    TileMap m;
    m.ranks = p.ranks;
    m.m_pad = padded_m(p);
    m.base_m = p.base_m;
    m.base_n = p.base_n;
    m.n_tiles = p.n / p.base_n;
    m.owner_tiles = p.n / p.ranks / p.base_n;
    m.tiles = m.m_pad / p.base_m * m.n_tiles;
    return m;
}

Task stacked_gemm_kernel(BlockCtx& blk, SummedGemm g, MrsArgs a, bool notify) {
    const int me = a.rank;
    GemmTilePipeline pipe(blk, g.grid.base_m, g.grid.base_n, g.grid.a.dtype());
    for (int t : tiles_of_block(g, blk.block_idx(), blk.block_num())) {
        co_await compute_partial_tile(pipe, g, t);
        co_await pipe.store(a.map.stacked_tile(a.partial[static_cast<std::size_t>(me)], t));
        if (notify) {
            pipe_barrier(blk, PIPE_ALL);  // the partial is in GM before its flag (release)
            TNOTIFY(blk, a.ready(a.map.owner(t), me, t), 1, NotifyOp::Set);
        }
    }
    pipe.drain();
}
}  // namespace

int padded_m(const OpParams& p) { return round_up(p.m, p.base_m); }

double mrs_workspace_bytes(const OpParams& p) {
    // In double: absurd shapes must give a message, not an overflow.
    const double m = std::ceil(double(p.m) / p.base_m) * p.base_m;
    const double tiles = m / p.base_m * std::ceil(double(p.n) / p.base_n);
    const double baseline = p.ranks > 0 && p.n % p.ranks == 0 ? double(round_up(baseline_layout(p).bytes(), kRegionAlignBytes)) : 0.0;
    return baseline + m * p.n * dtype_bytes(p.out_dtype) + 32 + 4.0 * tiles;  // ready: W x tiles/W words
}

std::vector<int> TileMap::owned_tiles(int rank) const {
    std::vector<int> out;
    for (int row = 0; row < m_pad / base_m; ++row)
        for (int j = 0; j < owner_tiles; ++j) out.push_back(row * n_tiles + rank * owner_tiles + j);
    return out;
}

KernelLaunch make_stacked_gemm_kernel(const SummedGemm& g, const MrsArgs& a, bool notify, int blocks) {
    return KernelLaunch{notify ? "MatmulPartialNotifyKernel" : "MatmulPartialKernel", CoreType::AIC, blocks,
                        [g, a, notify](BlockCtx& blk) { return stacked_gemm_kernel(blk, g, a, notify); }};
}

MrsRun::MrsRun(const OpParams& p)
    : params_(p), layout_(baseline_layout(p)), map_(tile_map_of(p)), partial_offset_(round_up(layout_.bytes(), kRegionAlignBytes)),
      flags_offset_(round_up(partial_offset_ + std::int64_t{map_.m_pad} * p.n * dtype_bytes(p.out_dtype), kRegionAlignBytes)),
      bytes_(flags_offset_ + 4 * std::int64_t{p.ranks} * map_.owned_count()),
      workspace_(static_cast<std::size_t>(p.ranks), nullptr), tensors_(static_cast<std::size_t>(p.ranks)) {}

void MrsRun::allocate_workspace(int rank, GlobalMemory& gm) {
    workspace_[static_cast<std::size_t>(rank)] = &gm.allocate("mrs_workspace", bytes_, /*shared=*/true);
}

void MrsRun::bind(int rank, const RankTensors& t) { tensors_[static_cast<std::size_t>(rank)] = t; }

MrsArgs MrsRun::args(int rank) const {
    MrsArgs a{map_, rank, {}, {}, {}};
    const int cols = params_.n / params_.ranks;
    for (int r = 0; r < params_.ranks; ++r) {
        const GmAllocation& ws = *workspace_[static_cast<std::size_t>(r)];
        a.partial.emplace_back(ws, partial_offset_, params_.ranks * map_.m_pad, cols, cols, params_.out_dtype);
        a.out.push_back(tensors_[static_cast<std::size_t>(r)].out);
        a.flags_base.push_back(ws.base + flags_offset_);
    }
    return a;
}

HostAction MrsRun::reset_ready_flags(int rank) const {
    const SignalAddr first = args(rank).ready(rank, 0, 0);
    const int words = args(rank).ready_words();
    return [first, words](HostContext& host) { host.write_signals(first.address, words, 0); };
}

collectives::CollectiveArgs MrsRun::baseline_args(int rank) const {
    std::vector<collectives::CollectiveWorkspace> ws;
    for (const GmAllocation* a : workspace_) ws.push_back(collectives::CollectiveWorkspace{a, 0});
    return collectives::CollectiveArgs{layout_, collectives::collective_algo_for(params_.topology), rank, args(rank).partial,
                                       ws};
}

ViewPlan MrsRun::view(ViewKind kind, int rank) const {
    if (kind == ViewKind::Pipelined) return pipelined_view(rank);
    const collectives::CollectiveArgs a = baseline_args(rank);
    GemmThenComm parts;
    parts.gemm = {kComputeStream, make_stacked_gemm_kernel(gemm(rank), args(rank), false, params_.compute_blocks)};
    parts.comm = {kCommStream, collectives::make_reduce_scatter_kernel(a)};
    parts.comm_reset = [a](HostContext& host) { collectives::reset_collective_flags(host, a); };
    return gemm_then_comm_view(kind, parts, {});
}

}  // namespace tandem::kernels::mrs
