#pragma once
// What the one_shot and two_shot variants share: two streams, a GEMM kernel on the cube and a
// reduction kernel on the vector cores, meeting through each rank's partial buffer P (M x N in
// the output dtype, in the peer window) and flags.
//   GEMM (AIC): tile t's partial stored into the local P (FIX, cast to the output dtype), then
//     pipe_barrier (the data complete) and TNOTIFY of ready[src = me][t] on each rank that will
//     read it (release: a reader that sees the flag sees the data).
//   reduction (AIV): per comm sub-tile of a GEMM tile, waits for ready[p][t] of every rank p,
//     pulls the W partials (remote TLOAD from the peers' windows), sums them in UB in rank order
//     (so every rank gets the same bits) and stores the sum; the items are dealt to the vector
//     blocks in the order the GEMM produces the tiles, so the reduction trails the GEMM.
// Why two streams rather than one MIX kernel: a tile's partial is needed by the vector cores of
// other ranks, not only by the AIVs of the cluster that made it, so the hand-off has to go
// through GM and a flag the peers can see anyway; a cross-core flag would only add a second
// signal. And the GEMM's blocks never wait on the reduction, so the two kernels run freely.
#include <cstdint>
#include <vector>

#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/matmul_all_reduce/mar_run.hpp"

namespace tandem::kernels::mar {

struct PartialsLayout {
    // `ring`: also a ring buffer (a slot for every comm sub-tile, M x N in the output dtype) and
    // two flag arrays of one word per sub-tile (the ring variant; two_shot's inbox fits the same
    // room: W slots of ceil(tiles / W) tiles, and one flag per (source, owned sub-tile)).
    // `sum_dtype`: the dtype the reduction sums a sub-tile in (the comm sub-tiles are cut so that
    // its UB stage fits: collectives::fused_sum_dtype for one_shot and two_shot; the output's
    // dtype for ring, whose hops add two values and store).
    PartialsLayout(const OpParams& p, bool ring, DType sum_dtype);
    int ranks;
    int tiles;                      // GEMM output tiles
    collectives::CommGrid sub;      // a GEMM tile cut into comm sub-tiles
    std::int64_t partial_bytes;
    std::int64_t flags_offset;      // ready[src][t], ranks x tiles words
    std::int64_t counter_offset;    // one word: comm sub-tiles arrived (two_shot's gather)
    // ring: the ring buffer (M x N, output dtype); two_shot: the owner's inbox, one slot per
    // source rank of ceil(tiles / W) tiles (the owner's tiles t are t = o, o + W, ...: slot t / W).
    std::int64_t ring_offset = 0;
    std::int64_t rs_flags_offset = 0;  // ring: reduce-scatter arrivals, one word per sub-tile
    std::int64_t ag_flags_offset = 0;  // ring: all-gather arrivals, one word per sub-tile
    std::int64_t bytes;
};

// Where things are on every rank, for the kernels (copied into them by value).
struct PartialsArgs {
    PartialsLayout layout;
    int rank = 0;
    int base_m = 0;
    int base_n = 0;
    int n_tiles = 0;                        // tiles per row of C
    std::vector<GmTensor> partial;          // per rank
    std::vector<GmTensor> ring_buf;         // per rank (ring: M x N; two_shot: the inbox stack)
    std::vector<GmTensor> out;              // per rank
    std::vector<std::int64_t> region_base;  // per rank: device address of the variant's region

    int subs() const { return layout.sub.tiles(); }
    SignalAddr ready(int r, int src, int t) const;
    SignalAddr counter(int r) const;
    SignalAddr rs_arrived(int r, int t, int s) const;  // ring only
    SignalAddr ag_arrived(int r, int t, int s) const;  // ring only
    // two_shot: owner r's inbox, sub-tile s of tile t from `src`, and its arrival flag.
    int owned_slots() const { return ceil_div(layout.tiles, layout.ranks); }
    GmTensor inbox_sub_tile(int r, int src, int t, int s) const;
    SignalAddr inbox_arrived(int r, int src, int t, int s) const;
    // Comm sub-tile s of GEMM tile t of an M x N tensor.
    GmTensor sub_tile(const GmTensor& m, int t, int s) const;
};

// The GEMM kernel: every tile's partial into P, then ready[me][t] set on each of `readers(t)`
// (one_shot: every rank; two_shot and ring: only the rank itself).
enum class Readers : std::uint8_t { All, Owner, Self };
KernelLaunch make_partials_gemm_kernel(const SummedGemm& g, const PartialsArgs& a, Readers readers, int blocks);

class PartialsRun : public MarRun {
public:
    PartialsRun(const OpParams& p, bool ring, DType sum_dtype);

protected:
    PartialsArgs args(int rank) const;
    // The pipelined view's host reset: ready flags and the counter to 0.
    HostAction reset_flags(int rank) const;
    // The pipelined view of the data-parallel schedule: the partials GEMM (flagging `readers`) on
    // the compute stream and the variant's `reduce` kernel on the comm stream, after reset_flags.
    ViewPlan partials_view(int rank, Readers readers, KernelLaunch reduce) const;
    PartialsLayout layout_;
};

// The owner of tile t in two_shot (interleaved, so every rank owns tiles of every GEMM wave).
inline int tile_owner(int t, int ranks) { return t % ranks; }

double partials_variant_bytes(const OpParams& p, bool ring = false);

}  // namespace tandem::kernels::mar
