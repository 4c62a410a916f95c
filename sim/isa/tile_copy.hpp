#pragma once
// Functional data movement between GM views and tiles (row-major), handling ND and DN layouts.
// Eager: each copy first settles deferred effects it could observe (materializes a source tile
// with deferred content, runs the GM hooks of sim/mem/gm_deferred.hpp).
#include <cstddef>
#include <vector>

#include "sim/core/tile.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem {

void copy_gm_to_tile(Tile& dst, const GmTensor& src);
void copy_tile_to_gm(const GmTensor& dst, const Tile& src);
// The tile's bytes, packed row-major (for a store that crosses the interconnect).
std::vector<std::byte> pack_tile(const Tile& src);
// Rows x cols of `src` starting at (row, col) into `dst` (both row-major, same dtype).
void copy_tile_region(Tile& dst, const Tile& src, int row, int col);

}  // namespace tandem
