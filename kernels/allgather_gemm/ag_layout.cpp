#include "kernels/allgather_gemm/ag_layout.hpp"

#include <algorithm>

namespace tandem::kernels {

AgGemmTiling::AgGemmTiling(const AgGemmShape& s)
    : shape(s),
      rows_per_rank(s.m / s.ranks),
      local_row_groups(s.m / s.ranks / s.base_m),
      row_groups(s.m / s.base_m),
      k_tiles(s.k / s.base_n),
      n_tiles(s.n / s.base_n),
      tiles_per_source(local_row_groups * k_tiles),
      chunk_size(s.chunk_tiles > 0 ? s.chunk_tiles : compute_chunk_size(tiles_per_source)),
      num_chunks(chunk_count(tiles_per_source, chunk_size)),
      base_k(s.base_n / 4) {}

int AgGemmTiling::chunk_end_tile(int c) const { return std::min((c + 1) * chunk_size, tiles_per_source); }

WindowLayout::WindowLayout(const AgGemmTiling& t)
    : a_offset(kGuardBytes),
      flags(t.shape.ranks, t.num_chunks, kGuardBytes + 2LL * t.shape.m * t.shape.k),
      total_bytes(flags.region_offset + flags.bytes()) {}

}  // namespace tandem::kernels
