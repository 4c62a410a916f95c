#include "kernels/common/collectives/scatter_tiles.hpp"

#include <algorithm>

#include "kernels/common/collectives/ub_stage.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::collectives {

namespace {

// Readiness tile t to the peers of group `group` of `groups` (peer i, i = 1..ranks-1 after this
// rank in the tile's order, goes to group i % groups), comm tile by comm tile through UB.
Task send_tile(BlockCtx& blk, UbStage& ub, const TileScatter& s, int t, int group, int groups) {
    const int ranks = static_cast<int>(s.dst.size());
    const int subRows = s.tile_rows / s.comm_rows;
    const int subCols = s.tile_cols / s.comm_cols;
    if (s.ready) co_await TWAIT(blk, s.ready_flag(t), CmpOp::GE, 1);
    const int row0 = t / s.col_tiles() * s.tile_rows;
    const int col0 = t % s.col_tiles() * s.tile_cols;
    // Peers in the order after this rank, so the ranks do not all hit one peer at once; spread:
    // tile t starts t peers further on, so the workers (each on its own tile) use all the rank's
    // links at once instead of queueing on the link to my_rank+1.
    const int rotation = s.spread ? t : 0;
    for (int sub = 0; sub < subRows * subCols; ++sub) {
        const int r = row0 + sub / subCols * s.comm_rows;
        const int c = col0 + sub % subCols * s.comm_cols;
        co_await ub.load(s.src.sub(r, c, s.comm_rows, s.comm_cols));
        for (int i = 1; i < ranks; ++i) {
            if (i % groups != group) continue;
            const int peer = (s.my_rank + 1 + (i - 1 + rotation) % (ranks - 1)) % ranks;
            if (peer == s.skip_rank) continue;
            co_await ub.store(s.dst[static_cast<std::size_t>(peer)].sub(r, c, s.comm_rows, s.comm_cols));
        }
        ub.finish_item();
    }
}

}  // namespace

Task scatter_tiles(BlockCtx& blk, TileScatter s, int worker, int workers) {
    UbStage ub(blk, s.comm_rows, s.comm_cols, s.src.dtype());
    const int ranks = static_cast<int>(s.dst.size());
    const int tiles = s.tiles();
    if (!s.spread) {
        // Worker w sends tiles w, w + workers, ... to every peer.
        for (int t = worker; t < tiles; t += workers) co_await send_tile(blk, ub, s, t, 0, 1);
        ub.drain();
        co_return;
    }
    // Full rounds (one tile per worker, to every peer), then the last, partial round with the
    // workers split over its tiles, each sending its tile to a share of the peers: without the
    // split, the workers with a last-round tile push it alone to every peer while the others
    // idle (8 tiles of 48 workers: 8 busy; 64 tiles: 16 busy at the end), and a worker's store
    // rate, not the links, bounds that tail.
    const int fullTiles = tiles / workers * workers;
    for (int t = worker; t < fullTiles; t += workers) co_await send_tile(blk, ub, s, t, 0, 1);
    const int lastTiles = tiles - fullTiles;
    if (lastTiles > 0) {
        const int groups = std::clamp(workers / lastTiles, 1, std::max(1, ranks - 1));
        if (worker / groups < lastTiles)  // else a remainder worker: no full set of groups
            co_await send_tile(blk, ub, s, fullTiles + worker / groups, worker % groups, groups);
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
