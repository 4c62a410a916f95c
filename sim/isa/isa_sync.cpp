// set_flag / wait_flag (a happens-before edge between two pipes of one core) and pipe_barrier.
#include <algorithm>

#include <fmt/format.h>

#include "sim/exec/logical_process.hpp"
#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void bad_flag_args(const char* instr, Pipe src, Pipe dst, int id) {
    if (src == Pipe::ALL || dst == Pipe::ALL || src == dst) {
        throw SimError(fmt::format("{}({}, {}, {}): source and destination must be two different single pipes", instr,
                                   pipe_name(src), pipe_name(dst), id));
    }
    throw SimError(fmt::format("{}({}, {}, {}): event id out of range 0..{}", instr, pipe_name(src), pipe_name(dst), id,
                               kEventIds - 1));
}

// Every set_flag and wait_flag comes through here: the checks inline, their messages out of line.
inline void check_flag_args(BlockCtx& blk, const char* instr, Pipe src, Pipe dst, int id) {
    blk.current_instr = instr;
    if (src == Pipe::ALL || dst == Pipe::ALL || src == dst || id < 0 || id >= kEventIds) [[unlikely]] {
        bad_flag_args(instr, src, dst, id);
    }
    blk.require_pipe(src, instr);
    blk.require_pipe(dst, instr);
}
}  // namespace

void set_flag(BlockCtx& blk, Pipe src, Pipe dst, int id) {
    check_flag_args(blk, "set_flag", src, dst, id);
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    SimTime done;
    if (src == Pipe::S) {
        done = issue;
    } else {
        // The flag is set when every earlier instruction on the source pipe has finished.
        const SimTime start = blk.pipe_start(src, issue);
        done = start + cost.set_flag_ps;
        blk.core().free_at[static_cast<std::size_t>(pipe_index(src))] = done;
    }
    blk.now_ref() = issue;
    BlockCtx::FlagQueue& q = blk.flag_queue(src, dst, id);
    if (q.size == q.times.size()) {
        throw SimError(fmt::format("set_flag({}, {}, {}): more than {} sets without a wait_flag", pipe_name(src),
                                   pipe_name(dst), id, q.times.size()));
    }
    q.times[(q.head + q.size) % q.times.size()] = done;
    ++q.size;
    blk.lp().count_instruction();
    isa_detail::record(blk, src, Opcode::SET_FLAG, done, done, isa_detail::RecordArgs{0, 0, -1, id, 0});
}

void wait_flag(BlockCtx& blk, Pipe src, Pipe dst, int id) {
    check_flag_args(blk, "wait_flag", src, dst, id);
    BlockCtx::FlagQueue& q = blk.flag_queue(src, dst, id);
    if (q.size == 0) {
        throw SimError(fmt::format("deadlock: wait_flag({}, {}, {}) with no matching set_flag: pipe {} would wait "
                                   "forever",
                                   pipe_name(src), pipe_name(dst), id, pipe_name(dst)));
    }
    const SimTime set_at = q.times[q.head];
    q.head = static_cast<std::uint8_t>((q.head + 1) % q.times.size());
    --q.size;
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    blk.now_ref() = issue;
    SimTime released;
    StreamSanitizer* san = blk.lp().sanitizer();
    if (dst == Pipe::S) {
        released = std::max(issue, set_at) + cost.wait_flag_ps;
        blk.now_ref() = released;
        if (san) san->pipe_waited(blk.san_part(), src);
    } else {
        if (san) san->pipe_ordered(blk.san_part(), src, dst);
        // The destination pipe takes nothing new before the flag is set.
        SimTime& free_at = blk.core().free_at[static_cast<std::size_t>(pipe_index(dst))];
        released = std::max({free_at, issue, set_at}) + cost.wait_flag_ps;
        free_at = released;
    }
    blk.lp().count_instruction();
    isa_detail::record(blk, dst, Opcode::WAIT_FLAG, released, released, isa_detail::RecordArgs{0, 0, -1, id, 0});
}

void pipe_barrier(BlockCtx& blk, Pipe pipe) {
    blk.current_instr = "pipe_barrier";
    blk.require_pipe(pipe, "pipe_barrier");
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    auto& free_at = blk.core().free_at;
    SimTime done;
    if (pipe == Pipe::ALL) {
        // Every pipe drains, and the scalar waits for it.
        SimTime t = issue;
        for (SimTime f : free_at) t = std::max(t, f);
        done = t + cost.pipe_barrier_ps;
        for (int p = 0; p < kPipeCount; ++p)
            if (core_has_pipe(blk.core_type(), static_cast<Pipe>(p))) free_at[static_cast<std::size_t>(p)] = done;
        blk.now_ref() = done;
        if (StreamSanitizer* san = blk.lp().sanitizer()) san->pipe_waited(blk.san_part(), Pipe::ALL);
    } else {
        SimTime& f = free_at[static_cast<std::size_t>(pipe_index(pipe))];
        done = std::max(f, issue) + cost.pipe_barrier_ps;
        f = done;
        blk.now_ref() = issue;
    }
    blk.lp().count_instruction();
    isa_detail::record(blk, pipe == Pipe::ALL ? Pipe::S : pipe, Opcode::PIPE_BARRIER, issue, done);
}

void dsb(BlockCtx& blk) {
    blk.current_instr = "dsb";
    const CostModel& cost = blk.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    // Its own fixed cost is a barrier's; a store's pipe time already ends where its bytes land.
    const SimTime done = std::max(issue, blk.remote_writes_acked_at) + cost.pipe_barrier_ps;
    blk.now_ref() = done;
    blk.lp().count_instruction();
    isa_detail::record(blk, Pipe::S, Opcode::DSB, issue, done);
}

void TSCALAR(BlockCtx& blk, std::int64_t instructions) {
    blk.current_instr = "TSCALAR";
    if (instructions <= 0) return;
    const CostModel& cost = blk.cost();
    const SimTime start = blk.now();
    const SimTime end = start + cost.issue_ps * instructions;
    blk.now_ref() = end;
    blk.lp().count_instruction();
    isa_detail::record(blk, Pipe::S, Opcode::SCALAR, start, end, isa_detail::RecordArgs{instructions});
}

}  // namespace tandem
