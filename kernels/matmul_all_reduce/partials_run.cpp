#include "kernels/matmul_all_reduce/partials_run.hpp"

#include <cmath>

#include "kernels/common/int_math.hpp"
#include "kernels/common/view_plans.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mar {

PartialsLayout::PartialsLayout(const OpParams& p, bool ring, DType sum_dtype)
    : ranks(p.ranks), tiles((padded_m(p) / p.base_m) * (padded_n(p) / p.base_n)),
      sub(collectives::make_comm_grid(p.base_m, p.base_n, sum_dtype, p.base_m)),
      partial_bytes(std::int64_t{padded_m(p)} * padded_n(p) * dtype_bytes(p.out_dtype)),
      flags_offset(round_up(partial_bytes, kRegionAlignBytes)), counter_offset(flags_offset + 4 * std::int64_t{ranks} * tiles),
      bytes(counter_offset + 32) {
    if (ring) {
        // Room for W slots of ceil(tiles / W) tiles (>= tiles), and as many flags per array.
        const std::int64_t slot_tiles = std::int64_t{ranks} * ceil_div(tiles, ranks);
        const std::int64_t items = slot_tiles * sub.tiles();
        // Aligned to the GM access granule: the slots' rows are written by different blocks, and
        // two writers must never share a granule (the sanitizer checks it).
        ring_offset = round_up(bytes, kRegionAlignBytes);
        rs_flags_offset = round_up(ring_offset + slot_tiles * (partial_bytes / tiles), kRegionAlignBytes);
        ag_flags_offset = rs_flags_offset + 4 * items;
        bytes = ag_flags_offset + 4 * items;
    }
}

double partials_variant_bytes(const OpParams& p, bool ring) {
    // In double: absurd shapes must give a message, not an overflow.
    const double tiles = std::ceil(double(p.m) / p.base_m) * std::ceil(double(p.n) / p.base_n);
    const double c_bytes =
        std::ceil(double(p.m) / p.base_m) * p.base_m * std::ceil(double(p.n) / p.base_n) * p.base_n * dtype_bytes(p.out_dtype);
    const double base = c_bytes + 64 + 4.0 * p.ranks * tiles;
    // The ring buffer, and two flags per comm sub-tile (at least one row of a tile each).
    const double slot_tiles = p.ranks * std::ceil(tiles / p.ranks);
    return ring ? base + c_bytes / tiles * slot_tiles + 64 + 8.0 * slot_tiles * p.base_m : base;
}

SignalAddr PartialsArgs::ready(int r, int src, int t) const {
    return SignalAddr{r, region_base[static_cast<std::size_t>(r)] + layout.flags_offset +
                             4 * (std::int64_t{src} * layout.tiles + t)};
}

SignalAddr PartialsArgs::rs_arrived(int r, int t, int s) const {
    return SignalAddr{r, region_base[static_cast<std::size_t>(r)] + layout.rs_flags_offset +
                             4 * (std::int64_t{t} * subs() + s)};
}

SignalAddr PartialsArgs::ag_arrived(int r, int t, int s) const {
    return SignalAddr{r, region_base[static_cast<std::size_t>(r)] + layout.ag_flags_offset +
                             4 * (std::int64_t{t} * subs() + s)};
}

GmTensor PartialsArgs::inbox_sub_tile(int r, int src, int t, int s) const {
    const GmTensor& room = ring_buf[static_cast<std::size_t>(r)];
    const GmTensor stack(room.allocation(), room.offset_bytes(), layout.ranks * owned_slots() * base_m, base_n, base_n,
                         room.dtype());
    const int slot = src * owned_slots() + t / layout.ranks;
    return layout.sub.tile(stack.sub(slot * base_m, 0, base_m, base_n), s);
}

SignalAddr PartialsArgs::inbox_arrived(int r, int src, int t, int s) const {
    const std::int64_t slot = std::int64_t{src} * owned_slots() + t / layout.ranks;
    return SignalAddr{r, region_base[static_cast<std::size_t>(r)] + layout.rs_flags_offset + 4 * (slot * subs() + s)};
}

SignalAddr PartialsArgs::counter(int r) const {
    return SignalAddr{r, region_base[static_cast<std::size_t>(r)] + layout.counter_offset};
}

GmTensor PartialsArgs::sub_tile(const GmTensor& m, int t, int s) const {
    const GmTensor tile = m.sub(t / n_tiles * base_m, t % n_tiles * base_n, base_m, base_n);
    return layout.sub.tile(tile, s);
}

PartialsRun::PartialsRun(const OpParams& p, bool ring, DType sum_dtype)
    : MarRun(p, PartialsLayout(p, ring, sum_dtype).bytes), layout_(p, ring, sum_dtype) {}

PartialsArgs PartialsRun::args(int rank) const {
    const OpParams& p = params();
    PartialsArgs a{layout_, rank, p.base_m, p.base_n, padded_n(p) / p.base_n, {}, {}, outputs(), {}};
    for (int r = 0; r < p.ranks; ++r) {
        const GmAllocation& ws = workspace(r);
        a.partial.emplace_back(ws, variant_offset(), padded_m(p), padded_n(p), padded_n(p), p.out_dtype);
        a.region_base.push_back(ws.base + variant_offset());
        if (layout_.ring_offset > 0)
            a.ring_buf.emplace_back(ws, variant_offset() + layout_.ring_offset, padded_m(p), padded_n(p), padded_n(p),
                                    p.out_dtype);
    }
    return a;
}

HostAction PartialsRun::reset_flags(int rank) const {
    const SignalAddr first = args(rank).ready(rank, 0, 0);
    const int words = layout_.ranks * layout_.tiles + 1;  // the ready flags, then the counter
    const std::int64_t ring_flags = layout_.ring_offset > 0 ? args(rank).rs_arrived(rank, 0, 0).address : 0;
    const int ring_words = static_cast<int>((layout_.bytes - layout_.rs_flags_offset) / 4);
    return [first, words, ring_flags, ring_words](HostContext& host) {
        host.write_signals(first.address, words, 0);
        if (ring_flags != 0) host.write_signals(ring_flags, ring_words, 0);
    };
}

ViewPlan PartialsRun::partials_view(int rank, Readers readers, KernelLaunch reduce) const {
    return launched_together(reset_flags(rank),
                             {{kComputeStream, make_partials_gemm_kernel(gemm(rank), args(rank), readers, params().compute_blocks)},
                              {kCommStream, std::move(reduce)}});
}

namespace {
Task partials_gemm_kernel(BlockCtx& blk, SummedGemm g, PartialsArgs a, Readers readers) {
    const int W = a.layout.ranks;
    const int me = a.rank;
    GemmTilePipeline pipe(blk, g.grid.base_m, g.grid.base_n, g.grid.a.dtype());
    for (int t : tiles_of_block(g, blk.block_idx(), blk.block_num())) {
        co_await compute_partial_tile(pipe, g, t);
        co_await pipe.store(g.grid.c_tile(a.partial[static_cast<std::size_t>(me)], t));
        pipe_barrier(blk, PIPE_ALL);  // the partial is in GM before its flag (release)
        if (readers == Readers::Owner) {
            TNOTIFY(blk, a.ready(tile_owner(t, W), me, t), 1, NotifyOp::Set);
        } else if (readers == Readers::Self) {
            TNOTIFY(blk, a.ready(me, me, t), 1, NotifyOp::Set);
        } else {
            for (int k = 0; k < W; ++k) TNOTIFY(blk, a.ready((me + k) % W, me, t), 1, NotifyOp::Set);
        }
    }
    pipe.drain();
}
}  // namespace

KernelLaunch make_partials_gemm_kernel(const SummedGemm& g, const PartialsArgs& a, Readers readers, int blocks) {
    return KernelLaunch{"MatmulPartialNotifyKernel", CoreType::AIC, blocks,
                        [g, a, readers](BlockCtx& blk) { return partials_gemm_kernel(blk, g, a, readers); }};
}

}  // namespace tandem::kernels::mar
