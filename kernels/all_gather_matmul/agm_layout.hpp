#pragma once
// all_gather_matmul's shape and window, shared by its kernels and its description.
//
// A (M x K) is split along K: rank r holds A_r = A[:, r*Kr : (r+1)*Kr], Kr = K / ranks. Every rank
// computes all of C = A x B (+ bias) with B (K x N) replicated. The GEMM walks, for each output
// tile, every source rank's shard in K tiles one cube K panel deep (k_tile: base_n, or base_n / 2
// for fp32, kernels/common/panel_k.hpp; a "K tile" of source s is the base_m x k_tile block of A
// at columns s*Kr + kt*k_tile): the unit A is gathered and multiplied in, the same bytes for
// every dtype.
//
// Each rank's peer window (symmetric: same layout on every rank) holds
//   gathered   Mp x K of the input dtype: the all-gathered A (column block s = source s's shard).
//              The rank's own block is A_r (copied there by the host, as Iris's A_sharded lives
//              on the symmetric heap); push stores into the other blocks (the inbox), staged
//              copies into them (the staging buffer), the sequential baseline all-gathers into
//              them; pull reads the peers' own blocks directly.
//   flags      ranks x m_tiles x k_groups int32 words: "source s's K group g of row tile mt has
//              landed here" (push: one K tile per group; staged: k_per_flag).
//   arrivals   the baseline all-gather's arrival counters (kernels/common/collectives/
//              all_gather_cols): one int32 word on a full mesh, one per ring step (ranks - 1)
//              on a ring profile.
#include <cstdint>
#include <string>

#include "kernels/common/int_math.hpp"
#include "kernels/common/panel_k.hpp"
#include "sim/exec/signal.hpp"
#include "sim/mem/dtype.hpp"

namespace tandem::kernels {

struct AgmShape {
    int ranks = 2;
    int m = 0;       // logical M
    int k = 0;       // K of the whole product (--gk)
    int n = 0;       // logical N
    int base_m = 128;
    int base_n = 256;
    int k_per_flag = 1;  // K tiles per flag (push: 1)
    DType dtype = DType::F16;
    int arrival_words = 1;  // the baseline all-gather's counters (all_gather_cols_arrival_words)

    int k_shard() const { return k / ranks; }                     // Kr: a whole number of K tiles (validated)
    int m_padded() const { return round_up(m, base_m); }
    int n_padded() const { return round_up(n, base_n); }
    int m_tiles() const { return m_padded() / base_m; }
    int n_tiles() const { return n_padded() / base_n; }
    int k_tile() const { return panel_k_for(base_n, dtype); }      // columns of A in one K tile
    int k_tiles() const { return k_shard() / k_tile(); }          // per source
    int k_groups() const { return ceil_div(k_tiles(), k_per_flag); }
    int esize() const { return dtype_bytes(dtype); }
};

struct AgmWindow {
    static constexpr std::int64_t kGuardBytes = 512;  // keeps offset 0 free (a null-looking address)
    explicit AgmWindow(const AgmShape& s)
        : shape(s),
          gathered_offset(kGuardBytes),
          flags_offset(gathered_offset + std::int64_t{s.m_padded()} * s.k * s.esize()),
          arrivals_offset(flags_offset + 4 * flag_count()),
          total_bytes(arrivals_offset + 4 * std::int64_t{s.arrival_words}) {}

    AgmShape shape;
    std::int64_t gathered_offset;
    std::int64_t flags_offset;
    std::int64_t arrivals_offset;
    std::int64_t total_bytes;

    std::int64_t flag_count() const { return std::int64_t{shape.ranks} * shape.m_tiles() * shape.k_groups(); }
    std::int64_t flag_offset(int src, int mt, int group) const {
        return flags_offset + 4 * ((std::int64_t{src} * shape.m_tiles() + mt) * shape.k_groups() + group);
    }
    SignalAddr flag(int rank, std::int64_t window_base, int src, int mt, int group) const {
        return SignalAddr{rank, window_base + flag_offset(src, mt, group)};
    }
    SignalAddr arrivals(int rank, std::int64_t window_base) const {
        return SignalAddr{rank, window_base + arrivals_offset};
    }
    // "flag[src=1,mt=0,g=2]" / "arrivals" (ring: "arrivals[step=s]" for s >= 1) for an offset in
    // the window; empty otherwise.
    std::string name_of(std::int64_t offset) const;
};

}  // namespace tandem::kernels
