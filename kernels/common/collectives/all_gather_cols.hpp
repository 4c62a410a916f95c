#pragma once
// An HCCL-style all-gather of column shards on the vector cores (AIV), the sequential baseline
// of the ops that gather an operand along its columns (all_gather_matmul gathers A along K).
//
// Every rank holds a `gathered` tensor (rows x ranks*shard_cols) at the same place of its peer
// window; rank r's own shard is already in its column block r. The kernel copies that block
// into block r of every peer's `gathered`: each tile_rows x tile_cols tile is loaded into UB
// once and stored to every peer (the mesh algorithm, one direct write per peer; on a ring
// profile the writes are routed over the ring's hops). Two UB buffers let the next tile's load
// overlap the current tile's stores. When its stores are done, every block raises each peer's
// arrival counter once (data complete before the count: pipe barrier, then TNOTIFY); the kernel
// ends on a rank only when every block of every peer has counted there, so a GEMM launched
// after it on the same stream sees the whole gathered operand. The host zeroes the counters
// before each call.
#include <vector>

#include "sim/exec/logical_process.hpp"
#include "sim/exec/signal.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels {

struct AllGatherColsArgs {
    int my_rank = 0;
    std::vector<GmTensor> gathered;     // per rank, in its window: rows x (ranks * shard_cols)
    int shard_cols = 0;                 // a multiple of tile_cols
    int tile_rows = 0;                  // rows is a multiple of it
    int tile_cols = 0;
    std::vector<SignalAddr> arrivals;   // per rank: its arrival counter (zeroed by the host)
};

// Every rank must launch it with the same block count.
KernelLaunch make_all_gather_cols_kernel(const AllGatherColsArgs& args, int blocks);

}  // namespace tandem::kernels
