// The GEMM kernel (AIC) of all_gather_matmul, Iris's persistent consumer: output tiles in the
// data-parallel order; for each tile, the sources in the order me, me+1, ... (own shard first,
// it needs no communication), and each source's K tiles in order. pull loads a remote source's
// A tile straight from its window (no flags, no staging: the tile is fetched again for every N
// tile of the row, Iris's pull cost); push and staged read the local gathered buffer and wait
// on the group's flag first.
#include "kernels/all_gather_matmul/agm_kernels.hpp"
#include "kernels/common/gemm_tile_pipeline.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

GmTensor AgmArgs::gathered(int rank) const {
    const AgmWindow w = window();
    return GmTensor(*windows[static_cast<std::size_t>(rank)], w.gathered_offset, shape.m_padded(), shape.k, shape.k,
                    shape.dtype, Layout::ND);
}

namespace {

// The bias slice of output tile (mt, nt): a row of base_n values (per column) or a column of
// base_m values (per row).
GmTensor bias_slice(const AgmArgs& a, int mt, int nt) {
    const AgmShape& s = a.shape;
    if (a.bias_kind == BiasKind::N) return a.bias.sub(0, nt * s.base_n, 1, s.base_n);
    const GmTensor column(a.bias.allocation(), a.bias.offset_bytes(), a.bias.cols(), 1, 1, a.bias.dtype(), Layout::ND);
    return column.sub(mt * s.base_m, 0, s.base_m, 1);
}

Task agm_gemm(BlockCtx& blk, AgmArgs a, AgmASource source, AgmWait wait) {
    const AgmShape& s = a.shape;
    const AgmWindow w = a.window();
    const int me = a.my_rank;
    GemmTilePipeline pipe(blk, s.base_m, s.base_n, s.dtype);
    const GmTensor local = a.gathered(me);
    std::vector<GmTensor> sources;  // where each source's shard is read from
    for (int src = 0; src < s.ranks; ++src)
        sources.push_back(source == AgmASource::Remote ? a.gathered(src) : local);
    const int tiles = s.m_tiles() * s.n_tiles();
    for (int t = blk.block_idx(); t < tiles; t += blk.block_num()) {
        const int mt = t / s.n_tiles();
        const int nt = t % s.n_tiles();
        if (a.bias_kind != BiasKind::None) co_await pipe.load_bias(bias_slice(a, mt, nt));
        pipe.begin_tile();
        for (int i = 0; i < s.ranks; ++i) {
            const int src = (me + i) % s.ranks;
            int kEnd = s.k_tiles();
            if (a.fault == AgmFault::SkipRemoteKTile && i == s.ranks - 1) --kEnd;
            for (int kt = 0; kt < kEnd; ++kt) {
                if (kt % s.k_per_flag == 0 && (wait == AgmWait::All || (wait == AgmWait::Peers && src != me)))
                    co_await TWAIT(blk, w.flag(me, a.window_base(me), src, mt, kt / s.k_per_flag), CmpOp::GE, 1);
                const int kCol = src * s.k_shard() + kt * s.k_tile();
                co_await pipe.accumulate(sources[static_cast<std::size_t>(src)].sub(mt * s.base_m, kCol, s.base_m, s.k_tile()),
                                         a.b.sub(kCol, nt * s.base_n, s.k_tile(), s.base_n));
            }
        }
        co_await pipe.store(a.c.sub(mt * s.base_m, nt * s.base_n, s.base_m, s.base_n));
    }
    pipe.drain();
}

}  // namespace

KernelLaunch make_agm_gemm_kernel(const AgmArgs& args, AgmASource source, AgmWait wait, int blocks) {
    const char* name = source == AgmASource::Remote ? "AllGatherMatmulPullKernel"
                       : wait == AgmWait::None      ? "AllGatherMatmulLocalGemmKernel"
                                                    : "AllGatherMatmulConsumerKernel";
    return KernelLaunch{name, CoreType::AIC, blocks,
                        [args, source, wait](BlockCtx& blk) { return agm_gemm(blk, args, source, wait); }};
}

}  // namespace tandem::kernels
