#include "kernels/common/stream_k_gemm.hpp"

#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/gemm_bias.hpp"
#include "kernels/common/int_math.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

Task aic_part(BlockCtx& blk, StreamKGemm g, TileSink sink) {
    const GemmGrid& grid = g.grid;
    const int b = blk.block_idx();
    GemmTilePipeline pipe(blk, grid.base_m, grid.base_n, grid.a.dtype());
    const auto& segs = g.schedule.segments(b);
    for (int i = 0; i < static_cast<int>(segs.size()); ++i) {
        const GemmSegment& s = segs[static_cast<std::size_t>(i)];
        // The bias enters once: with the tile's first K panel (its partial is in slot order first).
        if (s.k_begin == 0 && g.bias_kind != BiasKind::None) {
            co_await pipe.load_bias(bias_tile_slice(g.bias, g.bias_kind, grid.tile_row(s.tile) * grid.base_m,
                                                    g.bias_col0 + grid.tile_col(s.tile) * grid.base_n, grid.base_m,
                                                    grid.base_n));
        }
        int k_end = s.k_end;
        if (g.skip_last_k_panel && k_end == grid.k_panels && k_end - 1 > s.k_begin) --k_end;
        co_await compute_tile(pipe, grid, s.tile, s.k_begin, k_end);
        if (!g.schedule.split(s.tile)) {
            co_await pipe.store_each(sink.targets(s.tile), sink.atomic);
            if (sink.notify) {
                pipe.wait_stores();  // the tile has landed before its flags (release)
                for (const SignalAddr& f : sink.notify(s.tile)) TNOTIFY(blk, f, 1, NotifyOp::Set);
            }
            continue;
        }
        co_await pipe.store(g.slot(g.schedule.partial_slot(b, i)));
        // Only FIX must be done (not a full pipe_barrier, which would also stall the next
        // segment's prefetch on MTE2): the partial is in GM before the counter moves.
        pipe.wait_stores();
        TNOTIFY(blk, g.counter(g.schedule.partial_slot(b, i)), 1, NotifyOp::Set);
    }
    pipe.drain();
}

// The fix-up of split tile t on one AIV: rows in chunks through UB (fp32 acc and input, the
// output-dtype cast), single-buffered; the pipes ordered by flags only.
Task fixup_tile(BlockCtx& blk, const StreamKGemm& g, const TileSink& sink, int t, Tile& acc, Tile& in, Tile* cast,
                bool& stores_pending) {
    const GemmGrid& grid = g.grid;
    const int contributors = g.schedule.contributors(t);
    const int first = g.schedule.first_slot(t);
    // The fix-up waits: one per partial, each on its own flag (a flow from each partial's store).
    for (int p = 0; p < contributors; ++p) co_await TWAIT(blk, g.counter(first + p), CmpOp::GE, 1);
    const int used = g.skip_partial ? contributors - 1 : contributors;  // fault: the last partial left out
    const int rows = acc.rows;
    const std::vector<GmTensor> targets = sink.targets(t);
    for (int r0 = 0; r0 < grid.base_m; r0 += rows) {
        if (stores_pending) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);  // the last stores have read UB
        co_await TLOAD(acc, g.slot(first).sub(r0, 0, rows, grid.base_n));
        Pipe writer = PIPE_MTE2;
        for (int p = 1; p < used; ++p) {
            if (writer == PIPE_V) wait_flag(blk, PIPE_V, PIPE_MTE2, 1);  // the last TADD has read `in`
            co_await TLOAD(in, g.slot(first + p).sub(r0, 0, rows, grid.base_n));
            set_flag(blk, PIPE_MTE2, PIPE_V, 0);
            wait_flag(blk, PIPE_MTE2, PIPE_V, 0);
            TADD(acc, acc, in);
            set_flag(blk, PIPE_V, PIPE_MTE2, 1);
            writer = PIPE_V;
        }
        if (writer == PIPE_V) wait_flag(blk, PIPE_V, PIPE_MTE2, 1);  // balanced: every set has its wait
        Tile* out = &acc;
        if (cast != nullptr) {
            if (writer == PIPE_MTE2) {
                set_flag(blk, PIPE_MTE2, PIPE_V, 0);
                wait_flag(blk, PIPE_MTE2, PIPE_V, 0);
            }
            TCVT(*cast, acc);
            out = cast;
            writer = PIPE_V;
        }
        set_flag(blk, writer, PIPE_MTE3, 0);
        wait_flag(blk, writer, PIPE_MTE3, 0);
        for (const GmTensor& dst : targets) co_await TSTORE(dst.sub(r0, 0, rows, grid.base_n), *out, sink.atomic);
        set_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
        stores_pending = true;
    }
    if (sink.notify) {
        pipe_barrier(blk, PIPE_ALL);  // the tile has landed everywhere before its flags (release)
        for (const SignalAddr& f : sink.notify(t)) TNOTIFY(blk, f, 1, NotifyOp::Set);
    }
}

Task aiv_part(BlockCtx& blk, StreamKGemm g, TileSink sink) {
    const int b = blk.block_idx();
    const GemmGrid& grid = g.grid;
    const int rows = collectives::comm_tile_rows(grid.base_m, grid.base_n, DType::F32);
    Tile& acc = blk.alloc_tile(MemKind::UB, rows, grid.base_n, DType::F32, "fixupAccTile");
    Tile& in = blk.alloc_tile(MemKind::UB, rows, grid.base_n, DType::F32, "fixupPartialTile");
    Tile* cast = g.out_dtype == DType::F32 ? nullptr
                                           : &blk.alloc_tile(MemKind::UB, rows, grid.base_n, g.out_dtype, "fixupOutTile");
    bool stores_pending = false;
    int fixups = 0;
    const auto& segs = g.schedule.segments(b);
    for (int i = 0; i < static_cast<int>(segs.size()); ++i) {
        const int t = segs[static_cast<std::size_t>(i)].tile;
        if (!g.schedule.split(t) || !g.schedule.finishes_tile(b, i)) continue;
        // The cluster's two AIVs take this block's fix-ups in turn, so two can run at once.
        if (fixups++ % blk.sub_block_num() != blk.sub_block_idx()) continue;
        co_await fixup_tile(blk, g, sink, t, acc, in, cast, stores_pending);
    }
    if (stores_pending) wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
}

}  // namespace

StreamKLayout stream_k_layout(const GemmSchedule& s, int base_m, int base_n) {
    StreamKLayout l;
    l.slots = s.partial_slots();
    l.tiles = s.tiles();
    l.partials_offset = 0;
    l.counters_offset = round_up(std::int64_t{l.slots} * base_m * base_n * 4, kRegionAlignBytes);
    l.bytes = round_up(l.counters_offset + 4 * std::int64_t{l.slots}, kRegionAlignBytes);
    return l;
}

Task stream_k_gemm_cluster(BlockCtx& blk, StreamKGemm g, TileSink sink) {
    if (blk.core_type() == CoreType::AIC) return aic_part(blk, std::move(g), std::move(sink));
    return aiv_part(blk, std::move(g), std::move(sink));
}

KernelLaunch make_stream_k_gemm_kernel(const std::string& name, const StreamKGemm& g, const TileSink& sink) {
    return KernelLaunch{name, KernelType::MIX, g.schedule.blocks(),
                        [g, sink](BlockCtx& blk) { return stream_k_gemm_cluster(blk, g, sink); }};
}

void reset_stream_k_counters(HostContext& host, const StreamKGemm& g) {
    if (g.schedule.partial_slots() > 0) host.write_signals(g.counters.address, g.schedule.partial_slots(), 0);
}

}  // namespace tandem::kernels

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"

namespace tandem::kernels {
void check_stream_k_blocks(const OpParams& p, const BufferLimits& lim) {
    if (p.schedule == "data_parallel") return;
    const int clusters = std::min(lim.aic_cores, lim.aiv_cores / 2);
    if (p.compute_blocks < 1 || p.compute_blocks > clusters) {
        throw ParamError({{kParamComputeBlocks, p.compute_blocks}},
                         fmt::format("{} {} runs a MIX kernel whose clusters must all be resident (a fix-up waits on "
                                     "other blocks), 1..{} on {}",
                                     mention(kParamSchedule), p.schedule, clusters, lim.profile_name),
                         {{kParamComputeBlocks, std::clamp(p.compute_blocks, 1, clusters)}});
    }
}
}  // namespace tandem::kernels
