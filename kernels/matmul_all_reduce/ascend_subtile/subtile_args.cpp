#include "kernels/matmul_all_reduce/ascend_subtile/subtile_ar.hpp"

namespace tandem::kernels {

GmTensor SubtileArArgs::tile_of(const GmTensor& matrix, int t) const {
    const AscendArShape& s = tiling.shape();
    return matrix.sub(tiling.tile_row(t) * s.base_m, tiling.tile_col(t) * s.base_n, s.base_m, s.base_n);
}

GmTensor SubtileArArgs::subtile_of(const GmTensor& matrix, int t, int stripe) const {
    return tile_of(matrix, t).sub(stripe * tiling.sub_m(), 0, tiling.sub_m(), tiling.shape().base_n);
}

SignalAddr SubtileArArgs::subtile_ready(int rank, int l) const {
    return SignalAddr{rank, signal_bases[static_cast<std::size_t>(rank)] + 4LL * signals.subtile_ready_slot(l)};
}

SignalAddr SubtileArArgs::ag_summary(int rank, int comm_block) const {
    return SignalAddr{rank, signal_bases[static_cast<std::size_t>(rank)] + 4LL * signals.summary_slot(comm_block)};
}

}  // namespace tandem::kernels
