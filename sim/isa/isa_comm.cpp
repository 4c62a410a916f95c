// TPUT / TGET: a tile copied between local GM and a peer's window through UB, serially (load,
// wait, store, wait) like the published single-tile implementation.
#include <algorithm>

#include <fmt/format.h>

#include "sim/exec/logical_process.hpp"
#include "sim/isa/isa.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {
// The scalar waits until everything issued on `pipe` has finished.
void wait_pipe(BlockCtx& blk, Pipe pipe) {
    blk.now_ref() = std::max(blk.now(), blk.core().free_at[static_cast<std::size_t>(pipe_index(pipe))]);
    if (StreamSanitizer* san = blk.lp().sanitizer()) san->pipe_waited(blk.san_part(), pipe);
}

Task relay_through_ub(GmTensor dst, GmTensor src, Tile& ub) {
    BlockCtx& blk = *ub.owner;
    co_await TLOAD(ub, src);
    wait_pipe(blk, Pipe::MTE2);
    co_await TSTORE(dst, ub);
    wait_pipe(blk, Pipe::MTE3);
}

void check_direction(const char* instr, const BlockCtx& blk, const GmTensor& local, const GmTensor& other) {
    if (local.rank() != blk.rank()) {
        throw SimError(fmt::format("{}: the local side must be this rank's GM (rank {}), not rank {}'s '{}'", instr,
                                   blk.rank(), local.rank(), local.allocation().name));
    }
    (void)other;
}
}  // namespace

Task TPUT(GmTensor dst, GmTensor src, Tile& ub) {
    check_direction("TPUT", *ub.owner, src, dst);
    return relay_through_ub(dst, src, ub);
}

Task TGET(GmTensor dst, GmTensor src, Tile& ub) {
    check_direction("TGET", *ub.owner, dst, src);
    return relay_through_ub(dst, src, ub);
}

}  // namespace tandem
