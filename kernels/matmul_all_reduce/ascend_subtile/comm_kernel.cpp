// GemmCommAllKernel (AIV) of the newer version (GemmCommAllImpl): one loop interleaving the
// subtile reduce-scatter (rs_pipeline.hpp) and the subtile all-gather (ag_drain.hpp), with no
// barrier of any kind. Per iteration:
//   did = !rs_done && RsTryProcessOneTile()            (at most one tile, both stripes)
//   if (!ag_done) did = did || AgDrainReadyAssignedSubtiles()
//   if (!did) { if (!rs_done) TWAIT on the queue; else if (!ag_done) TWAIT on ag_summary[b] }
// The `||` short-circuits: no AG drain in an iteration where the RS sent a tile. While the RS
// is unfinished an idle block waits on its compute queue, whatever becomes AG-ready meanwhile.
// The kernel ends when the block's own sends are done: it never waits for the peers' AG data to
// reach this rank (the host's synchronisation is what orders that before the output is read).
#include "kernels/matmul_all_reduce/ascend_subtile/ag_drain.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/rs_pipeline.hpp"

namespace tandem::kernels {

namespace {

Task gemm_comm_all(BlockCtx& blk, SubtileArArgs a) {
    const int subM = a.tiling.sub_m();
    const int baseN = a.tiling.shape().base_n;
    // UB, in this order: RS ping at 0, RS pong at sub_m x base_n x 2 B (32 KiB), AG at twice that.
    Tile* rsUb[2] = {&blk.alloc_tile(MemKind::UB, subM, baseN, DType::F16, "rsPing"),
                     &blk.alloc_tile(MemKind::UB, subM, baseN, DType::F16, "rsPong")};
    Tile& agUb = blk.alloc_tile(MemKind::UB, subM, baseN, DType::F16, "agBuf");
    RsPipeline rs(blk, a, rsUb);
    AgDrain ag(blk, a, agUb);
    while (!rs.done() || !ag.done()) {
        bool did = false;
        if (!rs.done()) co_await rs.try_process_one_tile(did);
        if (!ag.done() && !did) co_await ag.drain_ready(did);
        if (!did) {
            if (!rs.done()) co_await rs.wait_on_queue();
            else if (!ag.done()) co_await ag.wait_summary();
        }
    }
    pipe_barrier(blk, PIPE_ALL);
}

}  // namespace

KernelLaunch make_subtile_comm_kernel(const SubtileArArgs& args) {
    return KernelLaunch{"GemmCommAllKernel", CoreType::AIV, args.tiling.shape().comm_blocks,
                        [args](BlockCtx& blk) { return gemm_comm_all(blk, args); }};
}

}  // namespace tandem::kernels
