#include "kernels/common/collectives/scatter_tiles.hpp"

#include <algorithm>

#include "kernels/common/collectives/ub_stage.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::collectives {

Task scatter_tiles(BlockCtx& blk, TileScatter s, int worker, int workers) {
    UbStage ub(blk, s.comm_rows, s.comm_cols, s.src.dtype());
    const int ranks = static_cast<int>(s.dst.size());
    const int subRows = s.tile_rows / s.comm_rows;
    const int subCols = s.tile_cols / s.comm_cols;
    const int groups = std::max(1, s.peer_groups);
    const int group = worker % groups;
    const int tileWorkers = workers / groups;
    if (worker / groups >= tileWorkers) co_return;  // a remainder worker: no full set of groups
    for (int t = worker / groups; t < s.tiles(); t += tileWorkers) {
        if (s.ready) co_await TWAIT(blk, s.ready_flag(t), CmpOp::GE, 1);
        const int row0 = t / s.col_tiles() * s.tile_rows;
        const int col0 = t % s.col_tiles() * s.tile_cols;
        for (int sub = 0; sub < subRows * subCols; ++sub) {
            const int r = row0 + sub / subCols * s.comm_rows;
            const int c = col0 + sub % subCols * s.comm_cols;
            co_await ub.load(s.src.sub(r, c, s.comm_rows, s.comm_cols));
            // Peers in the order after this rank, so the ranks do not all hit one peer at once.
            for (int i = 1; i < ranks; ++i) {
                if (i % groups != group) continue;
                const int peer = (s.my_rank + i) % ranks;
                if (peer == s.skip_rank) continue;
                co_await ub.store(s.dst[static_cast<std::size_t>(peer)].sub(r, c, s.comm_rows, s.comm_cols));
            }
            ub.finish_item();
        }
    }
    ub.drain();
}

KernelLaunch make_scatter_kernel(const std::string& name, const TileScatter& s, int blocks) {
    return KernelLaunch{name, CoreType::AIV, blocks,
                        [s](BlockCtx& blk) { return scatter_tiles(blk, s, blk.block_idx(), blk.block_num()); }};
}

double scatter_ub_bytes(int comm_rows, int comm_cols, int elem_bytes) {
    return 4.0 * comm_rows * comm_cols * elem_bytes;  // UbStage: two sets of (accumulator, input)
}

}  // namespace tandem::kernels::collectives
