// gemm_all_to_all's two kernels, written against the tile ISA (sim/isa/isa.hpp) the way Ascend
// tile code reads. They meet through two kinds of signal words in GM:
//   ready[t]   set by the cube once tile t of C_r is in GM ("release": its store has landed
//              before the flag is set), waited on by the vector core before it reads the tile
//              ("acquire");
//   arrivals   on every rank, one count per push block of every rank, added once that block's
//              stores have all landed; block 0 of each rank's push kernel waits for all of them,
//              so when the push kernel ends the rank's output holds every peer's block.
#include "examples/custom_kernel/gemm_all_to_all_kernels.hpp"

namespace gemm_all_to_all {

namespace {

SignalAddr ready_flag(SignalAddr base, int tile) { return SignalAddr{base.rank, base.address + 4 * std::int64_t{tile}}; }

Task gemm_flag(BlockCtx& blk, GemmGrid g, GemmFlagArgs a) {
    // The K loop (A and B panels double-buffered in L1, K steps in L0A/L0B, the accumulator in
    // L0C) is the shared pipeline every shipped op uses; what this op adds is the flag.
    GemmTilePipeline pipe(blk, g.base_m, g.base_n, g.a.dtype());
    const int kEnd = a.skip_last_k_panel ? g.k_panels - 1 : g.k_panels;
    for (int t : data_parallel_tiles(g, blk.block_idx(), blk.block_num())) {
        if (a.bias_kind != BiasKind::None) {
            co_await pipe.load_bias(bias_tile_slice(a.bias, a.bias_kind, a.row0 + g.tile_row(t) * g.base_m,
                                                    g.tile_col(t) * g.base_n, g.base_m, g.base_n));
        }
        co_await compute_tile(pipe, g, t, 0, kEnd);  // TLOAD, TEXTRACT, TMATMUL(_ACC) per K step
        co_await pipe.store(g.c_tile(a.c_local, t));  // TSTORE L0C -> GM on FIX (cast to the out dtype)
        // Release: the scalar waits until FIX has written the tile (set_flag/wait_flag FIX -> S),
        // then sets the flag; a flag set earlier could let the push kernel read a stale tile.
        if (!a.flag_before_store) pipe.wait_stores();
        TNOTIFY(blk, ready_flag(a.ready, t), 1, NotifyOp::Set);
    }
    pipe.drain();
}

Task push_tiles(BlockCtx& blk, PushArgs s) {
    const int ranks = static_cast<int>(s.out.size());
    const int rowsPerRank = s.c_local.rows();           // M/n
    const int colsPerRank = s.c_local.cols() / ranks;   // N/n: a whole number of tiles
    const int nTiles = s.c_local.cols() / s.base_n;
    const int tiles = rowsPerRank / s.base_m * nTiles;
    const int pieces = s.base_m / s.push_rows;
    // Two UB buffers (ping, pong): one piece's load runs while the previous piece's store is
    // still on MTE3. Event id b on MTE3 -> MTE2 says "buffer b's store has read it"; both start set.
    Tile* cPieceUb[2] = {&blk.alloc_tile(MemKind::UB, s.push_rows, s.base_n, s.c_local.dtype(), "cPieceUbPing"),
                         &blk.alloc_tile(MemKind::UB, s.push_rows, s.base_n, s.c_local.dtype(), "cPieceUbPong")};
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    set_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
    int buf = 0;
    for (int t = blk.block_idx(); t < tiles; t += blk.block_num()) {
        const int row0 = t / nTiles * s.base_m;
        const int col0 = t % nTiles * s.base_n;
        const int owner = col0 / colsPerRank;
        if (owner == s.skip_rank) continue;
        // Acquire: the tile is in GM once its flag is set.
        co_await TWAIT(blk, ready_flag(s.ready, t), CmpOp::GE, 1);
        // Rank `owner` keeps columns [owner * N/n, ...) of C; this rank's rows go at my_rank * M/n.
        const GmTensor dst = s.out[static_cast<std::size_t>(owner)].sub(s.my_rank * rowsPerRank + row0, col0 - owner * colsPerRank,
                                                                        s.base_m, s.base_n);
        for (int p = 0; p < pieces; ++p) {
            wait_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);  // the buffer's previous store is done with it
            co_await TLOAD(*cPieceUb[buf], s.c_local.sub(row0 + p * s.push_rows, col0, s.push_rows, s.base_n));
            set_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);   // loaded ...
            wait_flag(blk, PIPE_MTE2, PIPE_MTE3, buf);  // ... before it is stored
            // UB -> GM on MTE3: into the owner's window over the link (or locally for own tiles).
            co_await TSTORE(dst.sub(p * s.push_rows, 0, s.push_rows, s.base_n), *cPieceUb[buf]);
            set_flag(blk, PIPE_MTE3, PIPE_MTE2, buf);
            buf = 1 - buf;
        }
    }
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 0);
    wait_flag(blk, PIPE_MTE3, PIPE_MTE2, 1);
    // Release: every store of this block has landed (at its target) before the block counts as
    // arrived on every rank.
    pipe_barrier(blk, PIPE_ALL);
    for (const SignalAddr& a : s.arrivals) TNOTIFY(blk, a, 1, NotifyOp::AtomicAdd);
    // Block 0 holds the kernel open until all ranks' blocks arrived here: then this rank's output
    // is complete when the kernel ends (the host's stream synchronize is the op's end).
    if (blk.block_idx() == 0) {
        co_await TWAIT(blk, s.arrivals[static_cast<std::size_t>(s.my_rank)], CmpOp::GE, ranks * blk.block_num());
    }
}

}  // namespace

KernelLaunch make_gemm_flag_kernel(const GemmFlagArgs& args, int blocks) {
    const GemmGrid g(args.a, args.b, args.base_m, args.base_n);  // throws if the tensors are not whole tiles
    return KernelLaunch{"GemmFlagKernel", CoreType::AIC, blocks, [g, args](BlockCtx& blk) { return gemm_flag(blk, g, args); }};
}

KernelLaunch make_push_kernel(const PushArgs& args, int blocks) {
    return KernelLaunch{"AllToAllPushKernel", CoreType::AIV, blocks, [args](BlockCtx& blk) { return push_tiles(blk, args); }};
}

}  // namespace gemm_all_to_all
