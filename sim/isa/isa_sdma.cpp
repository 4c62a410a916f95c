// TGET_ASYNC and WAIT_ASYNC: a peer's window copied into local GM by the chip's SDMA engine
// (sim/MODEL.md, "The SDMA engine").
//
// The engine is not a pipe of the core: the scalar issues a copy and goes on. A block's copies
// queue one after another (BlockCtx::sdma_free_at); each takes sdma_latency_ns (descriptor,
// doorbell, completion), then its bytes at sdma_gib_s, or slower if the local L2 has less left
// (it writes there, like any consumer of the chip's GM); the peer's memory serves the read over
// the same time. The links are not booked: the engine's measured rate over one link (19.6 GiB/s,
// the TGET table) is above what the links give the cores' MTE traffic (link_gb_s), so one figure
// cannot serve both (what a raw link carries is not measured).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/isa/tile_copy.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/sim_error.hpp"

namespace tandem {
namespace isa_detail {

namespace {

void check_copy(const BlockCtx& blk, const GmTensor& dst, const GmTensor& src) {
    if (!dst.valid() || !src.valid()) throw SimError("TGET_ASYNC: a GM tensor is not set");
    if (dst.rank() != blk.rank()) {
        throw SimError(fmt::format("TGET_ASYNC: the destination must be this rank's GM (rank {}), not rank {}'s '{}'",
                                   blk.rank(), dst.rank(), dst.allocation().name));
    }
    if (src.rank() != blk.rank() && !src.allocation().shared) {
        throw SimError(fmt::format("peer-window access violation: TGET_ASYNC from rank {} reads rank {}'s '{}', which is "
                                   "not in its peer window",
                                   blk.rank(), src.rank(), src.allocation().name));
    }
    if (dst.rows() != src.rows() || dst.cols() != src.cols() || dst.dtype() != src.dtype()) {
        throw SimError(fmt::format("TGET_ASYNC: the destination {} and the source {} differ in shape or dtype",
                                   dst.describe(), src.describe()));
    }
}

}  // namespace

SdmaCopy::SdmaCopy(BlockCtx& blk, const GmTensor& dst, const GmTensor& src) : blk_(blk), dst_(dst), src_(src) {
    blk_.current_instr = "TGET_ASYNC";
    check_copy(blk_, dst_, src_);
    issue_ = blk_.now() + blk_.cost().issue_ps;
}

// Ordered by issue time, as the pipes' moves are: the source is read, and the engine booked, in
// simulated-time order whatever the host threads do.
bool SdmaCopy::await_ready() { return blk_.lp().may_proceed(blk_, issue_); }

void SdmaCopy::await_suspend(std::coroutine_handle<> h) { blk_.lp().park(blk_, issue_, h); }

AsyncEvent SdmaCopy::await_resume() {
    blk_.current_instr = "TGET_ASYNC";
    blk_.now_ref() = issue_;
    LogicalProcess& lp = blk_.lp();
    const CostModel& cost = lp.cost();
    const auto bytes = static_cast<double>(dst_.bytes());
    const SimTime begin = std::max(issue_, blk_.sdma_free_at) + cost.sdma_latency_ps;
    SimTime end = lp.memory().book_local(dst_, MemAccess::Write, issue_, begin, bytes, cost.sdma_bps);
    const bool remote = src_.rank() != blk_.rank();
    if (remote) {
        lp.memory().note_remote(*lp.chip(src_.rank()).memory, src_, MemAccess::Read, issue_, begin, end, bytes);
        lp.count_remote_bytes(true, dst_.bytes());
    } else {  // a copy within the chip reads its own L2 too, and ends when both sides have
        end = std::max(end, lp.memory().book_local(src_, MemAccess::Read, issue_, begin, bytes, cost.sdma_bps));
    }
    blk_.sdma_free_at = end;
    record(blk_, Pipe::S, Opcode::TGET_ASYNC, issue_ - cost.issue_ps, issue_,
           RecordArgs{dst_.bytes(), src_.address(), remote ? src_.rank() : -1, 0, end});
    if (StreamSanitizer* san = lp.sanitizer()) {
        using A = StreamSanitizer::Access;
        san->access(blk_.san_part(), A::Read, src_, begin, Pipe::S, "TGET_ASYNC");
        san->access(blk_.san_part(), A::Write, dst_, end, Pipe::S, "TGET_ASYNC");
    }
    if (blk_.functional()) {
        // Through a buffer of the engine's own (no UB of the core).
        std::vector<std::byte> staging(static_cast<std::size_t>(dst_.bytes()));
        Tile buffer;
        buffer.owner = &blk_;
        buffer.name = "sdma staging";
        buffer.kind = MemKind::UB;
        buffer.rows = dst_.rows();
        buffer.cols = dst_.cols();
        buffer.dtype = dst_.dtype();
        buffer.data = staging.data();
        copy_gm_to_tile(buffer, src_, lp.work_scratch());
        copy_tile_to_gm(dst_, buffer, lp.work_scratch());
    }
    return AsyncEvent{end};
}

}  // namespace isa_detail

isa_detail::SdmaCopy TGET_ASYNC(BlockCtx& blk, const GmTensor& dst, const GmTensor& src) {
    return isa_detail::SdmaCopy(blk, dst, src);
}

void WAIT_ASYNC(BlockCtx& blk, const AsyncEvent& event) {
    blk.current_instr = "WAIT_ASYNC";
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    const SimTime resumed = std::max(issue, event.done) + cost.twait_poll_ps;
    blk.now_ref() = resumed;
    // The sanitizer takes the block's copies as complete here (they are its only accesses that
    // ride on the scalar).
    if (StreamSanitizer* san = blk.lp().sanitizer()) san->pipe_waited(blk.san_part(), Pipe::S);
    isa_detail::record(blk, Pipe::S, Opcode::WAIT_ASYNC, issue - cost.issue_ps, resumed,
                       isa_detail::RecordArgs{0, 0, -1, 0, event.done});
}

}  // namespace tandem
