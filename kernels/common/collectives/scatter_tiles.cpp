#include "kernels/common/collectives/scatter_tiles.hpp"

#include "sim/isa/isa.hpp"

namespace tandem::kernels::collectives {

namespace {
constexpr std::int64_t kCommTileBudgetBytes = 32 * 1024;
}

Task scatter_tiles(BlockCtx& blk, TileScatter s, int worker, int workers) {
    const DType dtype = s.src.dtype();
    Tile* ubTile[2];
    for (int i = 0; i < 2; ++i) {
        ubTile[i] = &blk.alloc_tile(MemKind::UB, s.comm_rows, s.comm_cols, dtype, i == 0 ? "ubPing" : "ubPong");
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, i);  // both buffers start free
    }
    const int ranks = static_cast<int>(s.dst.size());
    const int subRows = s.tile_rows / s.comm_rows;
    const int subCols = s.tile_cols / s.comm_cols;
    int buf = 0;
    for (int t = worker; t < s.tiles(); t += workers) {
        if (s.ready) co_await TWAIT(blk, s.ready_flag(t), CmpOp::GE, 1);
        const int row0 = t / s.col_tiles() * s.tile_rows;
        const int col0 = t % s.col_tiles() * s.tile_cols;
        for (int sub = 0; sub < subRows * subCols; ++sub) {
            const int r = row0 + sub / subCols * s.comm_rows;
            const int c = col0 + sub % subCols * s.comm_cols;
            wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);  // the buffer's previous stores have read it
            co_await TLOAD(*ubTile[buf], s.src.sub(r, c, s.comm_rows, s.comm_cols));
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);
            // Peers in the order after this rank, so the ranks do not all hit one peer at once.
            for (int i = 1; i < ranks; ++i) {
                const int peer = (s.my_rank + i) % ranks;
                if (peer == s.skip_rank) continue;
                co_await TSTORE(s.dst[static_cast<std::size_t>(peer)].sub(r, c, s.comm_rows, s.comm_cols), *ubTile[buf]);
            }
            set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
            buf ^= 1;
        }
    }
    for (int i = 0; i < 2; ++i) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, i);
}

KernelLaunch make_scatter_kernel(const std::string& name, const TileScatter& s, int blocks) {
    return KernelLaunch{name, CoreType::AIV, blocks,
                        [s](BlockCtx& blk) { return scatter_tiles(blk, s, blk.block_idx(), blk.block_num()); }};
}

double scatter_ub_bytes(int comm_rows, int comm_cols, int elem_bytes) {
    return 2.0 * comm_rows * comm_cols * elem_bytes;
}

int default_comm_rows(int tile_rows, int tile_cols, int elem_bytes) {
    for (int rows = tile_rows; rows > 1; --rows) {
        if (tile_rows % rows == 0 && std::int64_t{rows} * tile_cols * elem_bytes <= kCommTileBudgetBytes) return rows;
    }
    return 1;
}

}  // namespace tandem::kernels::collectives
