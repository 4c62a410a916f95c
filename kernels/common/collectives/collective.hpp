#pragma once
// The baseline collectives (HCCL as it runs on the vector cores: what the sequential view of a
// fused op compares against), shared by every op: a reduce-scatter, an all-gather and an
// all-reduce (= reduce-scatter then all-gather), each as a mesh algorithm (full-mesh
// interconnects: every rank talks to every peer at once) and a ring algorithm (ring
// interconnects: W-1 steps to the next rank), chosen by the profile's topology as HCCL would.
//
// Data model (in place, as HCCL works on its CCL buffers): every rank has a rows x cols buffer
// `data` in its peer window, cut into comm tiles (comm_grid.hpp); rank r owns slice r, the
// contiguous tile range slice(r) (split_even of the tiles over the ranks; with a grid made by
// make_comm_grid(rows, cols, dtype, rows / ranks) and rows % ranks == 0 it is exactly row block r).
//   reduce-scatter: in: every rank's whole buffer (partials); out: slice r of rank r's buffer is
//                   the sum over ranks (other slices: left as they were, or used as scratch);
//   all-gather:     in: slice r of rank r's buffer; out: every slice on every rank;
//   all-reduce:     in: every rank's whole buffer; out: the sum on every rank.
// The sum is taken in the buffer's dtype, in a fixed order (deterministic).
//
// Each rank also has a workspace (CollectiveLayout::bytes(), in its peer window): an inbox for
// peers' partials and the flag words. The host zeroes the flags before each run
// (reset_collective_flags), as HCCL's notify resources are reset between calls.
//
//   CollectiveLayout layout(ranks, make_comm_grid(m, n, dtype, m / ranks), dtype, comm_blocks);
//   // allocate layout.bytes() in each rank's window; then, per rank:
//   CollectiveArgs args{layout, collective_algo_for(topology), rank, data_of_each_rank, workspace_of_each_rank};
//   KernelLaunch ar = make_all_reduce_kernel(args);   // an AIV launch of layout.blocks blocks
#include <cstdint>
#include <vector>

#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/int_math.hpp"
#include "sim/exec/signal.hpp"
#include "sim/profile.hpp"

namespace tandem {
class HostContext;
}

namespace tandem::kernels::collectives {

enum class CollectiveAlgo : std::uint8_t { Mesh, Ring };

// What HCCL picks on a topology: mesh on a full mesh, ring on (double) rings.
CollectiveAlgo collective_algo_for(TopologyKind topology);
const char* collective_algo_name(CollectiveAlgo algo);  // "mesh" | "ring"

// The shape of one collective, identical on every rank: where its inbox and flags are in the
// workspace. Block b of a launch handles tiles b, b + blocks, ... of every slice, on every rank,
// so a block's flags pair it with the same block of its peers.
struct CollectiveLayout {
    CollectiveLayout(int ranks, const CommGrid& grid, DType dtype, int blocks);

    int ranks;
    CommGrid grid;
    DType dtype;
    int blocks;
    int slice_tiles_max;  // ceil(tiles / ranks): an inbox slot's capacity

    Range slice(int rank) const { return split_even(grid.tiles(), ranks, rank); }
    std::int64_t tile_bytes() const { return std::int64_t{grid.tile_rows} * grid.tile_cols * dtype_bytes(dtype); }
    // Inbox: `ranks` slots of slice_tiles_max tiles (mesh: slot = source rank; ring: slot = step).
    std::int64_t inbox_bytes() const { return std::int64_t{ranks} * slice_tiles_max * tile_bytes(); }
    // Flags: two regions (reduce phase, gather phase) of ranks x blocks words (index: source
    // rank for mesh, step for ring; then block).
    int flags_per_region() const { return ranks * blocks; }
    // (the flags start 32-byte aligned after the inbox)
    std::int64_t reduce_flags_offset() const { return round_up(inbox_bytes(), kRegionAlignBytes); }
    std::int64_t gather_flags_offset() const { return reduce_flags_offset() + 4 * std::int64_t{flags_per_region()}; }
    std::int64_t bytes() const { return reduce_flags_offset() + 8 * std::int64_t{flags_per_region()}; }
};

// Where a rank's workspace starts: an allocation in its peer window and an offset into it.
struct CollectiveWorkspace {
    const GmAllocation* alloc = nullptr;
    std::int64_t offset_bytes = 0;
};

// One rank's view of a collective: the layout, its rank, every rank's buffer and workspace
// (remote stores and flags go into the peers').
struct CollectiveArgs {
    CollectiveLayout layout;
    CollectiveAlgo algo = CollectiveAlgo::Mesh;
    int rank = 0;
    std::vector<GmTensor> data;                   // per rank: rows x cols, in that rank's window
    std::vector<CollectiveWorkspace> workspace;   // per rank

    // Tile `i` (a global tile number) of rank `r`'s buffer.
    GmTensor data_tile(int r, int i) const { return layout.grid.tile(data[static_cast<std::size_t>(r)], i); }
    // Tile `j` of inbox slot `slot` on rank `r`.
    GmTensor inbox_tile(int r, int slot, int j) const;
    SignalAddr reduce_flag(int r, int index, int block) const;
    SignalAddr gather_flag(int r, int index, int block) const;
};

// Checks the args (every rank's buffer and workspace given, buffers of the grid's shape and the
// layout's dtype, in a peer window); throws SimError naming what is wrong.
void check_collective_args(const CollectiveArgs& args);

// Host side, before each run on `rank`: every flag word of its workspace to 0.
void reset_collective_flags(HostContext& host, const CollectiveArgs& args);

}  // namespace tandem::kernels::collectives
