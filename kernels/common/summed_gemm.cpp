#include "kernels/common/summed_gemm.hpp"

namespace tandem::kernels {

SummedGemm summed_gemm_of(const OpParams& p, const RankTensors& t, int rank) {
    SummedGemm g{GemmGrid(t.a, t.b, p.base_m, p.base_n), {}, BiasKind::None, p.schedule};
    if (rank == 0 && p.bias != BiasKind::None) {
        g.bias = t.bias;
        g.bias_kind = p.bias;
    }
    return g;
}

std::vector<int> tiles_of_block(const SummedGemm& g, int block, int blocks) {
    return data_parallel_tiles(g.grid, block, blocks);  // the only schedule for now
}

Task compute_partial_tile(GemmTilePipeline& pipe, const SummedGemm& g, int t) {
    if (g.bias_kind == BiasKind::N) {
        co_await pipe.load_bias(g.bias.sub(0, g.grid.tile_col(t) * g.grid.base_n, 1, g.grid.base_n));
    } else if (g.bias_kind == BiasKind::M) {
        // One value per row: the tile's base_m values of the bias vector as a column.
        const std::int64_t offset = g.bias.offset_bytes() +
                                    std::int64_t{g.grid.tile_row(t)} * g.grid.base_m * dtype_bytes(g.bias.dtype());
        co_await pipe.load_bias(GmTensor(g.bias.allocation(), offset, g.grid.base_m, 1, 1, g.bias.dtype()));
    }
    co_await compute_tile(pipe, g.grid, t, 0, g.skip_last_k_panel && g.grid.k_panels > 1 ? g.grid.k_panels - 1 : -1);
}

namespace {
Task partial_gemm_kernel(BlockCtx& blk, SummedGemm g, GmTensor c) {
    GemmTilePipeline pipe(blk, g.grid.base_m, g.grid.base_n, g.grid.a.dtype());
    for (int t : tiles_of_block(g, blk.block_idx(), blk.block_num())) {
        co_await compute_partial_tile(pipe, g, t);
        co_await pipe.store(g.grid.c_tile(c, t));
    }
    pipe.drain();
}
}  // namespace

KernelLaunch make_partial_gemm_kernel(const SummedGemm& g, const GmTensor& c, int blocks) {
    return KernelLaunch{"MatmulPartialKernel", CoreType::AIC, blocks,
                        [g, c](BlockCtx& blk) { return partial_gemm_kernel(blk, g, c); }};
}

}  // namespace tandem::kernels
