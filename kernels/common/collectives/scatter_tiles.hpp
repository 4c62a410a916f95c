#pragma once
// Push one rank's block of a replicated output to every peer, tile by tile, on the vector cores:
// the communication half of the "every rank computes a block of C, every rank needs all of C"
// ops (matmul_all_scatter: a column block; matmul_all_gather: a row block). It is the sequential
// baseline's all-gather of C (every tile ready at once) and the consumer of the fused variants
// (each tile waited for on its ready flag, which the GEMM raises when the tile is stored).
//
// The block is cut into readiness tiles (the GEMM's base_m x base_n output tiles, row-major);
// each is moved in comm tiles (Iris's COMMUNICATION_TILE_M x _N) through the collectives' UbStage
// (ping and pong): the TLOAD of the next comm tile overlaps the TSTOREs of the current one.
// The baseline all-gather of collectives/all_gather.hpp gathers contiguous row slices; a rank's
// column block of C is not one, hence this kernel. Stores go
// straight into each peer's window (a direct, mesh-style all-gather: on a ring profile a message
// crosses the hops between the ranks).
#include <optional>
#include <string>
#include <vector>

#include "sim/exec/logical_process.hpp"
#include "sim/exec/signal.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels::collectives {

struct TileScatter {
    int my_rank = 0;
    GmTensor src;               // this rank's block in its own output (local)
    std::vector<GmTensor> dst;  // the same block in every rank's output (dst[my_rank] is not written)
    int tile_rows = 0;          // readiness tile (divides src)
    int tile_cols = 0;
    int comm_rows = 0;          // comm tile (divides the readiness tile)
    int comm_cols = 0;
    // Ready flags, one int32 word per readiness tile (row-major) from this address on this rank:
    // a tile is sent once its word is >= 1. None: every tile is ready (the baseline).
    std::optional<SignalAddr> ready;
    int skip_rank = -1;  // fault for tests: this peer never receives anything
    // How the work is spread over the workers (matmul_all_gather sets it; matmul_all_scatter's
    // variants keep the plain order, in which their published times were measured):
    //   false: worker w sends readiness tiles w, w + workers, ... to every peer, peer i = 1..
    //     ranks-1 after this rank in that order;
    //   true: as the baseline mesh collectives do (collective_steps' peer()), tile t's peer order
    //     starts t peers further on, so the workers, each on its own tile, drive every link of
    //     the rank at once instead of all queueing on the link to my_rank+1; and the last round
    //     of tiles (tiles % workers of them, all of them when a block has fewer tiles than
    //     workers) is shared out: each of its tiles goes to min(workers / its tiles, ranks-1)
    //     workers, each sending it to its share of the peers, so no worker idles while a few
    //     push their last tile to every peer alone.
    bool spread = false;

    int row_tiles() const { return src.rows() / tile_rows; }
    int col_tiles() const { return src.cols() / tile_cols; }
    int tiles() const { return row_tiles() * col_tiles(); }
    SignalAddr ready_flag(int tile) const { return SignalAddr{ready->rank, ready->address + 4 * std::int64_t{tile}}; }
};

// Worker `worker` of `workers` sends readiness tiles w, w + workers, ... (tiles come out of the
// GEMM in that order, so the first workers' tiles are ready first); see `spread` for the last
// round.
Task scatter_tiles(BlockCtx& blk, TileScatter s, int worker, int workers);

// The scatter as an AIV kernel of `blocks` blocks (one worker per block).
KernelLaunch make_scatter_kernel(const std::string& name, const TileScatter& s, int blocks);

// UB bytes a worker takes (UbStage: two sets of two comm tiles).
double scatter_ub_bytes(int comm_rows, int comm_cols, int elem_bytes);

}  // namespace tandem::kernels::collectives
