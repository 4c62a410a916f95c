// moe_ffn's stage work in pieces (moe_stages.hpp; README.md in this folder): what every stage
// shares. The pieces themselves: moe_stages_front.cpp (FrontReorder), moe_stages_move.cpp
// (Dispatch and Combine), moe_stages_gemm.cpp (GMM1 and GMM2), moe_stages_vector.cpp (SwiGLU and
// Unpermute).
#include "kernels/moe_ffn/moe_stages.hpp"

#include <algorithm>

#include "sim/exec/block_ctx.hpp"
#include "sim/isa/isa.hpp"

namespace tandem::kernels::moe {

std::pair<int, int> share(int items, Crew c) {
    const int per = items / c.count, extra = items % c.count;
    const int begin = c.index * per + std::min(c.index, extra);
    return {begin, begin + per + (c.index < extra ? 1 : 0)};
}

void release(BlockCtx& blk, SignalAddr sig, int value, NotifyOp op) {
    pipe_barrier(blk, PIPE_ALL);
    dsb(blk);
    TNOTIFY(blk, sig, value, op);
}

Task syncall(BlockCtx& blk) {
    pipe_barrier(blk, PIPE_ALL);
    CrossCoreSetFlag(blk, 0, PIPE_S, kSyncAllFlag);
    co_await CrossCoreWaitFlag(blk, kSyncAllFlag);
}

}  // namespace tandem::kernels::moe
