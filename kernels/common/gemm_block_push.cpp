#include "kernels/common/gemm_block_push.hpp"

#include "kernels/common/comm_tile_knobs.hpp"
#include "kernels/common/gemm_bias.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels {

GemmBlockArgs block_args_of(const OpParams& p, const RankTensors& t, int rank) {
    GemmBlockArgs a;
    a.my_rank = rank;
    a.ranks = p.ranks;
    a.a = t.a;
    a.b = t.b;
    a.bias = t.bias;
    a.bias_kind = p.bias;
    a.base_m = p.base_m;
    a.base_n = p.base_n;
    a.comm_tile_m = comm_tile_m(p);
    a.comm_tile_n = comm_tile_n(p);
    a.skip_last_k_panel = p.fault == "skip_last_k_panel";
    if (p.fault == "skip_peer") a.skip_peer = (rank + 1) % p.ranks;
    return a;
}

collectives::TileScatter GemmBlockArgs::scatter() const {
    collectives::TileScatter s;
    s.my_rank = my_rank;
    s.src = out_block[static_cast<std::size_t>(my_rank)];
    s.dst = out_block;
    s.tile_rows = base_m;
    s.tile_cols = base_n;
    s.comm_rows = comm_tile_m;
    s.comm_cols = comm_tile_n;
    s.ready = ready;
    s.skip_rank = skip_peer;
    return s;
}

StreamKGemm GemmBlockArgs::stream_k(GemmScheduleKind kind, int blocks, GmTensor partials, SignalAddr counters) const {
    const GemmGrid g = grid();
    StreamKGemm sk{g, GemmSchedule(kind, g.tiles(), g.k_panels, blocks), bias, bias_kind, col0,
                   out_block[static_cast<std::size_t>(my_rank)].dtype(), partials, counters};
    sk.skip_last_k_panel = skip_last_k_panel;
    return sk;
}

TileSink GemmBlockArgs::to_every_rank() const {
    TileSink sink;
    sink.targets = [g = grid(), out = out_block, me = my_rank, W = ranks, skip = skip_peer](int t) {
        std::vector<GmTensor> targets;
        for (int i = 1; i <= W; ++i) {
            const int r = (me + i) % W;
            if (r != skip) targets.push_back(g.c_tile(out[static_cast<std::size_t>(r)], t));
        }
        return targets;
    };
    return sink;
}

TileSink GemmBlockArgs::to_own_output() const {
    TileSink sink;
    sink.targets = [g = grid(), own = out_block[static_cast<std::size_t>(my_rank)]](int t) {
        return std::vector<GmTensor>{g.c_tile(own, t)};
    };
    if (ready) {
        sink.notify = [f = *ready](int t) {
            return std::vector<SignalAddr>{SignalAddr{f.rank, f.address + 4 * std::int64_t{t}}};
        };
    }
    return sink;
}

namespace {

// Tile t's K loop, started from its bias slice when there is one.
Task compute_block_tile(GemmTilePipeline& pipe, const GemmBlockArgs& a, const GemmGrid& g, int t) {
    if (a.bias_kind != BiasKind::None) {
        co_await pipe.load_bias(bias_tile_slice(a.bias, a.bias_kind, a.row0 + g.tile_row(t) * g.base_m,
                                                a.col0 + g.tile_col(t) * g.base_n, g.base_m, g.base_n));
    }
    co_await compute_tile(pipe, g, t, 0, a.skip_last_k_panel ? g.k_panels - 1 : g.k_panels);
}

// GEMM worker `worker` of `workers`: each tile into the own output, then (overlapping variants)
// its ready flag, raised only once the store has landed so the scatter never reads a stale tile.
Task gemm_worker(BlockCtx& blk, GemmBlockArgs a, int worker, int workers) {
    const GemmGrid g = a.grid();
    GemmTilePipeline pipe(blk, g.base_m, g.base_n, g.a.dtype());
    const GmTensor own = a.out_block[static_cast<std::size_t>(a.my_rank)];
    for (int t : data_parallel_tiles(g, worker, workers)) {
        co_await compute_block_tile(pipe, a, g, t);
        co_await pipe.store(g.c_tile(own, t));
        if (a.ready) {
            pipe.wait_stores();
            TNOTIFY(blk, SignalAddr{a.ready->rank, a.ready->address + 4 * std::int64_t{t}}, 1, NotifyOp::Set);
        }
    }
    pipe.drain();
}

Task fused_sequential(BlockCtx& blk, GemmBlockArgs a) {
    const GemmGrid g = a.grid();
    GemmTilePipeline pipe(blk, g.base_m, g.base_n, g.a.dtype());
    for (int t : data_parallel_tiles(g, blk.block_idx(), blk.block_num())) {
        co_await compute_block_tile(pipe, a, g, t);
        // Peers first, in the order after this rank (spreads the ranks over the links), the own
        // output last.
        std::vector<GmTensor> targets;
        for (int i = 1; i <= a.ranks; ++i) {
            const int r = (a.my_rank + i) % a.ranks;
            if (r != a.skip_peer) targets.push_back(g.c_tile(a.out_block[static_cast<std::size_t>(r)], t));
        }
        co_await pipe.store_each(std::move(targets));
    }
    pipe.drain();
}

Task specialized(BlockCtx& blk, GemmBlockArgs a, int gemm_blocks) {
    const bool gemm_block = blk.block_idx() < gemm_blocks;
    if (gemm_block && blk.core_type() == CoreType::AIC) {
        co_await gemm_worker(blk, a, blk.block_idx(), gemm_blocks);
    } else if (!gemm_block && blk.core_type() == CoreType::AIV) {
        const int workers = (blk.block_num() - gemm_blocks) * blk.sub_block_num();
        const int worker = (blk.block_idx() - gemm_blocks) * blk.sub_block_num() + blk.sub_block_idx();
        co_await collectives::scatter_tiles(blk, a.scatter(), worker, workers);
    }
    // The GEMM clusters' AIVs and the comm clusters' AIC have nothing to do.
}

Task specialized_stream_k(BlockCtx& blk, GemmBlockArgs a, StreamKGemm sk) {
    const int gemm_blocks = sk.schedule.blocks();
    if (blk.block_idx() < gemm_blocks) {
        co_await stream_k_gemm_cluster(blk, sk, a.to_own_output());
    } else if (blk.core_type() == CoreType::AIV) {
        const int workers = (blk.block_num() - gemm_blocks) * blk.sub_block_num();
        const int worker = (blk.block_idx() - gemm_blocks) * blk.sub_block_num() + blk.sub_block_idx();
        co_await collectives::scatter_tiles(blk, a.scatter(), worker, workers);
    }
}

}  // namespace

KernelLaunch make_block_specialized_stream_k_kernel(const std::string& name, const GemmBlockArgs& args, const StreamKGemm& sk,
                                                    int total_blocks) {
    return KernelLaunch{name, KernelType::MIX, total_blocks,
                        [args, sk](BlockCtx& blk) { return specialized_stream_k(blk, args, sk); }};
}

KernelLaunch make_block_gemm_kernel(const std::string& name, const GemmBlockArgs& args, int blocks) {
    return KernelLaunch{name, CoreType::AIC, blocks,
                        [args](BlockCtx& blk) { return gemm_worker(blk, args, blk.block_idx(), blk.block_num()); }};
}

KernelLaunch make_block_fused_sequential_kernel(const std::string& name, const GemmBlockArgs& args, int blocks) {
    return KernelLaunch{name, CoreType::AIC, blocks,
                        [args](BlockCtx& blk) { return fused_sequential(blk, args); }};
}

KernelLaunch make_block_specialized_kernel(const std::string& name, const GemmBlockArgs& args, int gemm_blocks,
                                          int total_blocks) {
    return KernelLaunch{name, KernelType::MIX, total_blocks,
                        [args, gemm_blocks](BlockCtx& blk) { return specialized(blk, args, gemm_blocks); }};
}

}  // namespace tandem::kernels
