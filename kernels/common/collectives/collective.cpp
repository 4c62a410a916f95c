#include "kernels/common/collectives/collective.hpp"

#include <fmt/format.h>

#include "kernels/common/int_math.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels::collectives {

CollectiveAlgo collective_algo_for(TopologyKind topology) {
    // A switched node reaches every peer directly, as a mesh does.
    return topology == TopologyKind::Ring || topology == TopologyKind::DoubleRing ? CollectiveAlgo::Ring : CollectiveAlgo::Mesh;
}

const char* collective_algo_name(CollectiveAlgo algo) { return algo == CollectiveAlgo::Mesh ? "mesh" : "ring"; }

CollectiveLayout::CollectiveLayout(int ranks_, const CommGrid& grid_, DType dtype_, int blocks_)
    : ranks(ranks_), grid(grid_), dtype(dtype_), blocks(blocks_),
      slice_tiles_max(ranks_ > 0 ? ceil_div(grid_.tiles(), ranks_) : 0) {
    if (ranks < 1 || blocks < 1 || grid.tile_rows < 1 || grid.tile_cols < 1 || grid.rows % grid.tile_rows != 0 ||
        grid.cols % grid.tile_cols != 0) {
        throw SimError(fmt::format("collective layout: {} ranks, {} blocks, a {}x{} matrix in {}x{} tiles: needs >= 1 "
                                   "rank and block and whole tiles",
                                   ranks, blocks, grid.rows, grid.cols, grid.tile_rows, grid.tile_cols));
    }
}

GmTensor CollectiveArgs::inbox_tile(int r, int slot, int j) const {
    const CollectiveWorkspace& w = workspace[static_cast<std::size_t>(r)];
    const CommGrid& g = layout.grid;
    const GmTensor stack(*w.alloc, w.offset_bytes, layout.ranks * layout.slice_tiles_max * g.tile_rows, g.tile_cols,
                         g.tile_cols, layout.dtype);
    return slot_tile(stack, g.tile_rows, slot * layout.slice_tiles_max + j);
}

namespace {
SignalAddr flag_at(const CollectiveArgs& a, int r, std::int64_t region, int index, int block) {
    const CollectiveWorkspace& w = a.workspace[static_cast<std::size_t>(r)];
    return SignalAddr{r, w.alloc->base + w.offset_bytes + region + 4 * (std::int64_t{index} * a.layout.blocks + block)};
}
}  // namespace

SignalAddr CollectiveArgs::reduce_flag(int r, int index, int block) const {
    return flag_at(*this, r, layout.reduce_flags_offset(), index, block);
}

SignalAddr CollectiveArgs::gather_flag(int r, int index, int block) const {
    return flag_at(*this, r, layout.gather_flags_offset(), index, block);
}

void check_collective_args(const CollectiveArgs& a) {
    const CollectiveLayout& l = a.layout;
    if (static_cast<int>(a.data.size()) != l.ranks || static_cast<int>(a.workspace.size()) != l.ranks) {
        throw SimError(fmt::format("collective on rank {}: {} buffers and {} workspaces given for {} ranks", a.rank,
                                   a.data.size(), a.workspace.size(), l.ranks));
    }
    if (a.rank < 0 || a.rank >= l.ranks) throw SimError(fmt::format("collective: rank {} of {}", a.rank, l.ranks));
    for (int r = 0; r < l.ranks; ++r) {
        const GmTensor& d = a.data[static_cast<std::size_t>(r)];
        if (!d.valid() || d.rows() != l.grid.rows || d.cols() != l.grid.cols || d.dtype() != l.dtype ||
            d.layout() != Layout::ND || !d.allocation().shared) {
            throw SimError(fmt::format("collective on rank {}: rank {}'s buffer {} is not a {}x{} {} ND tensor in its "
                                       "peer window",
                                       a.rank, r, d.valid() ? d.describe() : "(none)", l.grid.rows, l.grid.cols,
                                       dtype_name(l.dtype)));
        }
        const CollectiveWorkspace& w = a.workspace[static_cast<std::size_t>(r)];
        if (w.alloc == nullptr || !w.alloc->shared || w.offset_bytes < 0 || w.offset_bytes % 4 != 0 ||
            w.offset_bytes + l.bytes() > w.alloc->bytes) {
            throw SimError(fmt::format("collective on rank {}: rank {}'s workspace must be {} bytes at a 4-byte aligned "
                                       "offset of a peer-window allocation",
                                       a.rank, r, l.bytes()));
        }
    }
}

void reset_collective_flags(HostContext& host, const CollectiveArgs& a) {
    const SignalAddr first = a.reduce_flag(a.rank, 0, 0);
    host.write_signals(first.address, 2 * a.layout.flags_per_region(), 0);
}

}  // namespace tandem::kernels::collectives
