#pragma once
// The GEMM part every op shares: C (M x N) = A (M x K) x B (K x N) cut into base_m x base_n output
// tiles, each a K loop of panel_k-deep panels on the cube (GemmTilePipeline), and which block
// computes which tiles.
//
//   GemmGrid grid(a, b, base_m, base_n);          // tensors padded to whole tiles
//   for (int t : data_parallel_tiles(grid, blk.block_idx(), blk.block_num())) {
//       co_await compute_tile(pipe, grid, t);       // the K loop
//       co_await pipe.store(grid.c_tile(c, t));     // or what the op does with it
//   }
//
// data_parallel_tiles is the persistent-kernel order of Iris and the default schedule of every
// op: block b takes tiles b, b + blocks, b + 2*blocks, ... of the row-major tile order.
#include <string>
#include <vector>

#include "kernels/common/gemm_tile_pipeline.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels {

struct GemmGrid {
    // `a`: M x K (ND), `b`: K x N (DN, as the Ascend kernels keep B); both padded to whole tiles
    // (M to base_m, N to base_n, K to panel_k).
    GemmGrid(const GmTensor& a, const GmTensor& b, int base_m, int base_n);

    GmTensor a;
    GmTensor b;
    int base_m;
    int base_n;
    int panel_k;  // panel_k_for(base_n, A's dtype): base_n, or base_n / 2 for fp32
    int m_tiles;
    int n_tiles;
    int k_panels;  // K / panel_k

    int tiles() const { return m_tiles * n_tiles; }
    int tile_row(int t) const { return t / n_tiles; }
    int tile_col(int t) const { return t % n_tiles; }
    GmTensor a_panel(int t, int kp) const;   // base_m x panel_k of A for tile t's rows, K panel kp
    GmTensor b_panel(int t, int kp) const;   // panel_k x base_n of B for tile t's columns
    GmTensor c_tile(const GmTensor& c, int t) const;  // tile t of an M x N output
};

// The K panels of a K padded to whole panels of operands of `dtype` (panel_k_for): what
// GemmGrid::k_panels is for the padded tensors (stream-K schedules are cut from it before the
// tensors exist).
int k_panels_of(int k, int base_n, DType dtype);

// Tiles of block `block` among `blocks` in the data-parallel order.
std::vector<int> data_parallel_tiles(const GemmGrid& g, int block, int blocks);

// The K loop of tile t, panels [k_begin, k_end) (all of them by default), into the pipeline's
// accumulator (a new tile: the first panel is a TMATMUL).
Task compute_tile(GemmTilePipeline& pipe, GemmGrid g, int t, int k_begin = 0, int k_end = -1);

}  // namespace tandem::kernels
