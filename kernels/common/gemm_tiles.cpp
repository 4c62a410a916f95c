#include "kernels/common/gemm_tiles.hpp"

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem::kernels {

GemmGrid::GemmGrid(const GmTensor& a_, const GmTensor& b_, int base_m_, int base_n_)
    : a(a_), b(b_), base_m(base_m_), base_n(base_n_), panel_k(panel_k_for(base_n_, a_.dtype())),
      m_tiles(a_.rows() / base_m_), n_tiles(b_.cols() / base_n_), k_panels(a_.cols() / panel_k) {
    if (a.rows() % base_m != 0 || b.cols() % base_n != 0 || a.cols() % panel_k != 0 || a.cols() != b.rows()) {
        throw SimError(fmt::format("GEMM grid: A {} and B {} are not whole {}x{} tiles with matching K in whole {}-deep "
                                   "panels (pad them)",
                                   a.describe(), b.describe(), base_m, base_n, panel_k));
    }
}

GmTensor GemmGrid::a_panel(int t, int kp) const { return a.sub(tile_row(t) * base_m, kp * panel_k, base_m, panel_k); }

GmTensor GemmGrid::b_panel(int t, int kp) const { return b.sub(kp * panel_k, tile_col(t) * base_n, panel_k, base_n); }

GmTensor GemmGrid::c_tile(const GmTensor& c, int t) const {
    return c.sub(tile_row(t) * base_m, tile_col(t) * base_n, base_m, base_n);
}

int k_panels_of(int k, int base_n, DType dtype) {
    const int panel_k = panel_k_for(base_n, dtype);
    return (k + panel_k - 1) / panel_k;
}

std::vector<int> data_parallel_tiles(const GemmGrid& g, int block, int blocks) {
    std::vector<int> tiles;
    for (int t = block; t < g.tiles(); t += blocks) tiles.push_back(t);
    return tiles;
}

Task compute_tile(GemmTilePipeline& pipe, GemmGrid g, int t, int k_begin, int k_end) {
    if (k_end < 0) k_end = g.k_panels;
    pipe.begin_tile();
    for (int kp = k_begin; kp < k_end; ++kp) co_await pipe.accumulate(g.a_panel(t, kp), g.b_panel(t, kp));
}

}  // namespace tandem::kernels
