#pragma once
// Functional data movement between GM views and tiles (row-major), handling ND and DN layouts.
// Eager: each copy first settles deferred effects it could observe (materializes a source tile
// with deferred content, runs the GM hooks of sim/mem/gm_deferred.hpp).
#include <cstddef>
#include <vector>

#include "sim/core/tile.hpp"
#include "sim/mem/gm_deferred.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem {

// `scratch`: the copying stream's buffers for computing the deferred effects it settles.
void copy_gm_to_tile(Tile& dst, const GmTensor& src, WorkScratch& scratch);
// When dst's dtype differs from src's (an fp32 accumulator into fp16 or bf16: the FIX pipe's
// cast), each element is rounded to dst's dtype (nearest, ties to even).
void copy_tile_to_gm(const GmTensor& dst, const Tile& src, WorkScratch& scratch);
// The tile's bytes, packed row-major (for a store that crosses the interconnect).
std::vector<std::byte> pack_tile(const Tile& src);
// The same, each element converted to `dtype` (rounded to nearest even when narrower).
std::vector<std::byte> pack_tile_as(const Tile& src, DType dtype);
// Rows x cols of `src` starting at (row, col) into `dst` (both row-major, same dtype).
void copy_tile_region(Tile& dst, const Tile& src, int row, int col);

}  // namespace tandem
