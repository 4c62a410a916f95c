// TNOTIFY (write or atomically add a signal, locally or at a peer), TWAIT and TTEST.
#include <fmt/format.h>

#include "sim/isa/isa.hpp"
#include "sim/isa/record.hpp"
#include "sim/exec/signal_store.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/sim_error.hpp"

namespace tandem {

void TNOTIFY(BlockCtx& blk, SignalAddr sig, std::int32_t value, NotifyOp op) {
    blk.current_instr = "TNOTIFY";
    LogicalProcess& lp = blk.lp();
    if (sig.rank < 0 || sig.rank >= lp.ranks()) {
        throw SimError(fmt::format("TNOTIFY to rank {}: there are ranks 0..{}", sig.rank, lp.ranks() - 1));
    }
    const GlobalMemory& gm = *lp.chip(sig.rank).gm;
    gm.check_signal_word(sig.address);
    const CostModel& cost = lp.cost();
    const SimTime issue = blk.now() + cost.issue_ps;
    const bool remote = sig.rank != blk.rank();
    const SimTime visible = issue + (remote ? cost.remote_atomic_ps : cost.local_atomic_ps);
    blk.now_ref() = issue;
    Message m;
    m.kind = Message::Kind::Signal;
    m.visible_at = visible;
    m.dst_rank = sig.rank;
    m.address = sig.address;
    m.op = op;
    m.value = value;
    if (StreamSanitizer* san = lp.sanitizer()) {
        m.stamp = san->signal_release(blk.san_part(),
                                      fmt::format("TNOTIFY({} {}) on {}", op == NotifyOp::Set ? "set" : "add", value,
                                                  gm.describe(sig.address)),
                                      visible);
    }
    lp.send(std::move(m));
    lp.count_instruction();
    isa_detail::record(blk, Pipe::S, Opcode::TNOTIFY, issue - cost.issue_ps, issue,
                       isa_detail::RecordArgs{0, sig.address, sig.rank, value, visible});
}

namespace isa_detail {

SignalRead::SignalRead(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value, bool blocking)
    : blk_(blk), sig_(sig), cmp_(cmp), value_(value), blocking_(blocking) {
    const char* instr = blocking ? "TWAIT" : "TTEST";
    blk.current_instr = instr;
    if (sig.rank != blk.rank()) {
        throw SimError(fmt::format("{} on a signal of rank {}: a block can only wait on its own rank's memory (rank {})",
                                   instr, sig.rank, blk.rank()));
    }
    blk.lp().chip(sig.rank).gm->check_signal_word(sig.address);
    issue_ = blk.now() + blk.cost().issue_ps;
}

bool SignalRead::await_ready() {
    LogicalProcess& lp = blk_.lp();
    // A TTEST only reads, and every signal value before the window's end is final when the
    // window opens (a write made inside the window becomes visible at its end or later), so it
    // need not wait for the other blocks' earlier events: a polling loop runs ahead without a
    // trip through the event queue per poll. The value read, and so every result, is the same.
    if (blocking_ ? !lp.may_proceed(blk_, issue_) : issue_ >= lp.window_end()) return false;
    const std::int32_t seen = lp.chip(sig_.rank).signals->value_at(sig_.address, issue_);
    result_ = compare(seen, cmp_, value_);
    read_done_ = true;
    if (!blocking_ || result_) {
        blk_.now_ref() = issue_ + blk_.cost().twait_poll_ps;
        return true;
    }
    return false;
}

void SignalRead::await_suspend(std::coroutine_handle<> h) {
    LogicalProcess& lp = blk_.lp();
    if (!blocking_) {  // TTEST waits only for its turn
        lp.park(blk_, issue_, h);
        return;
    }
    blk_.wait_signal = sig_;
    blk_.wait_word = nullptr;
    blk_.wait_quiet_until = 0;
    blk_.wait_cmp = cmp_;
    blk_.wait_value = value_;
    blk_.wait_since = issue_;
    blk_.wait_issue = issue_;
    lp.park_waiting(blk_, h);
}

bool SignalRead::await_resume() {
    LogicalProcess& lp = blk_.lp();
    blk_.current_instr = blocking_ ? "TWAIT" : "TTEST";
    if (!blocking_ && !read_done_) {
        // Resumed at its turn after a park: read now.
        const std::int32_t seen = lp.chip(sig_.rank).signals->value_at(sig_.address, issue_);
        result_ = compare(seen, cmp_, value_);
        blk_.now_ref() = issue_ + blk_.cost().twait_poll_ps;
    }
    if (blocking_) result_ = true;
    if (StreamSanitizer* san = lp.sanitizer()) {
        // What the read observed: every write of the word visible by then.
        VectorClock seen;
        const SignalStore& store = *lp.chip(sig_.rank).signals;
        store.acquire_clocks(sig_.address, blk_.now(), seen);
        if (result_) {
            san->check_wait(
                blk_.san_part(), store.last_write(sig_.address, blk_.now()), sig_.address,
                [&] { return fmt::format("{}({} {})", blocking_ ? "TWAIT" : "TTEST", cmp_symbol(cmp_), value_); }, issue_);
        }
        san->acquire(blk_.san_part(), seen);
    }
    lp.count_instruction();
    record(blk_, Pipe::S, blocking_ ? Opcode::TWAIT : Opcode::TTEST, issue_ - blk_.cost().issue_ps, blk_.now(),
           RecordArgs{0, sig_.address, -1, value_, 0});
    return result_;
}

}  // namespace isa_detail

isa_detail::SignalRead TWAIT(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value) {
    return isa_detail::SignalRead(blk, sig, cmp, value, true);
}

isa_detail::SignalRead TTEST(BlockCtx& blk, SignalAddr sig, CmpOp cmp, std::int32_t value) {
    return isa_detail::SignalRead(blk, sig, cmp, value, false);
}

}  // namespace tandem
