#pragma once
// An HCCL-style all-gather of column shards on the vector cores (AIV), the sequential baseline
// of the ops that gather an operand along its columns (all_gather_matmul gathers A along K).
// The algorithm is the one HCCL picks for the topology (collective_algo_for), as for the
// baseline collectives of collective.hpp:
//
// Every rank holds a `gathered` tensor (rows x ranks*shard_cols) at the same place of its peer
// window; rank r's own shard is already in its column block r; at the end every rank's
// `gathered` holds every block.
//
// Mesh (full-mesh profiles): the kernel copies the own block into block r of every peer's
// `gathered`: each tile_rows x tile_cols tile is loaded into UB once and stored to every peer
// (one direct write per peer). When its stores are done, every block raises each peer's arrival
// counter (arrivals[peer], word 0) once (data complete before the count: pipe barrier, then
// TNOTIFY); the kernel ends on a rank only when every block of every peer has counted there.
//
// Ring (ring profiles, e.g. Ascend910_9372; collectives/all_gather.hpp's ring algorithm on
// column shards): W-1 steps; at step s rank r forwards block (r - s) mod W (its own at s = 0,
// then the block it received at step s-1) into the same block of rank r+1, so every write
// crosses one hop and every link carries one block per step. Each block of the kernel forwards
// its share of the block's tiles, then raises rank r+1's step-s counter (arrivals[r+1] + 4*s,
// after a pipe barrier); before step s > 0 a block waits for its own step-(s-1) counter to
// count every block of rank r-1 (the whole block it forwards has landed), and the kernel ends
// after step W-2's block (the last, from r+1 via W-2 hops) has landed.
//
// Either way a GEMM launched after it sees the whole gathered operand. Two UB buffers let the
// next tile's load overlap the current tile's stores. The host zeroes the counters before each
// call (arrival_words(algo, ranks) words from each rank's arrivals address).
#include <vector>

#include "kernels/common/collectives/collective.hpp"
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
    std::vector<SignalAddr> arrivals;   // per rank: its arrival counter(s) (zeroed by the host)
    collectives::CollectiveAlgo algo = collectives::CollectiveAlgo::Mesh;
};

// Counter words from each rank's arrivals address: 1 (mesh), ranks - 1 (ring: one per step).
int all_gather_cols_arrival_words(collectives::CollectiveAlgo algo, int ranks);

// Every rank must launch it with the same block count.
KernelLaunch make_all_gather_cols_kernel(const AllGatherColsArgs& args, int blocks);

}  // namespace tandem::kernels
