#include "sim/exec/logical_process.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sim/exec/signal_store.hpp"
#include "sim/core/cost_model.hpp"
#include "sim/sim_error.hpp"

// TWAIT: a block waiting for a signal word, checked when it starts waiting and at each window's
// start, woken by writes to its word (sim/exec/logical_process.hpp).
namespace tandem {

bool LogicalProcess::wait_satisfied(const BlockCtx& blk, SimTime t) const {
    const SignalStore& store = *chip(blk.wait_signal.rank).signals;
    return compare(store.value_at(blk.wait_signal.address, t), blk.wait_cmp, blk.wait_value);
}

std::optional<SimTime> LogicalProcess::wait_first_true(BlockCtx& blk) const {
    // A ring rank's forwarding blocks wait for chunks that arrive hundreds of windows later, and
    // are checked at the start of every window their stream runs. Ops reach the store only at
    // barriers, so while the word has had no new op (its version, or while it does not exist the
    // store's word count, is the same) and the window ends no later than the first op the last
    // check did not reach, this check would read the same ops over the same times: false again.
    // (Folding between checks merges only ops the last check already read, and changes no value
    // at or after the window's lower bound.)
    const SignalStore& store = *chip(blk.wait_signal.rank).signals;
    if (blk.wait_word == nullptr) {
        if (blk.wait_quiet_until != 0 && blk.wait_seen_version == store.word_count() && window_end_ <= blk.wait_quiet_until)
            return std::nullopt;
        blk.wait_word = store.find(blk.wait_signal.address);
        if (blk.wait_word != nullptr) blk.wait_quiet_until = 0;  // its ops have not been read yet
    } else if (blk.wait_quiet_until != 0 && blk.wait_seen_version == blk.wait_word->version &&
               window_end_ <= blk.wait_quiet_until) {
        return std::nullopt;
    }
    SimTime next_op_at = kNever;
    auto t = SignalStore::first_time_true(blk.wait_word, blk.wait_cmp, blk.wait_value, blk.wait_since, window_end_,
                                          next_op_at);
    if (!t) {
        blk.wait_seen_version = blk.wait_word != nullptr ? blk.wait_word->version : store.word_count();
        blk.wait_quiet_until = next_op_at;
    }
    return t;
}

void LogicalProcess::begin_wait(BlockCtx& blk) {
    // Every write visible before this window's end is already in the store (it was delivered at
    // an earlier barrier: a message is never visible inside the window that produced it). One
    // visible after wait_since but inside this window wakes the block here, at its exact time: left
    // to check_waiters() at the next window, it would resume below that window's lower bound
    // (in time other processes may have simulated past) and read a history the barrier has folded.
    // A write launched before the waiting kernel started is the usual case: the producer kernel
    // on another stream ran ahead, its flags were delivered before this block reached its TWAIT.
    blk.wait_quiet_until = 0;  // wait_since may have moved: no memo of an earlier check applies
    const auto t = wait_first_true(blk);
    if (t) {
        events_.push(Event{*t, blk.slot()});  // still `waiting`: satisfied when popped at *t
        return;
    }
    parked_[static_cast<std::size_t>(blk.slot())] = 1;
    ParkedWait w{blk.slot(), blk.wait_signal, chip(blk.wait_signal.rank).signals, nullptr, 0, 0};
    copy_memo(w, blk);
    waiters_.push_back(w);
    new_waiters_ = true;
    waiters_changed_ = true;
}

bool LogicalProcess::still_quiet(const ParkedWait& w) const {
    // wait_first_true()'s early return, on the copy of the block's memo.
    if (w.quiet_until == 0 || window_end_ > w.quiet_until) return false;
    return w.seen_version == (w.word != nullptr ? w.word->version : w.store->word_count());
}

void LogicalProcess::copy_memo(ParkedWait& w, const BlockCtx& blk) const {
    w.word = blk.wait_word;
    w.seen_version = blk.wait_seen_version;
    w.quiet_until = blk.wait_quiet_until;
}

void LogicalProcess::check_waiters() {
    new_waiters_ = false;
    std::size_t keep = 0;
    for (ParkedWait& w : waiters_) {
        if (still_quiet(w)) {
            waiters_[keep++] = w;
            continue;
        }
        const int b = w.slot;
        BlockCtx& blk = *blocks_[static_cast<std::size_t>(b)];
        const auto t = wait_first_true(blk);
        if (t) {
            // Every write visible before the last window this block ran in had ended was in the
            // store when it began waiting (see begin_wait), so a write found now lies at or above
            // this window's lower bound. Below it, the block would act in time other processes
            // may already have simulated past (a conservative-synchronisation violation).
            if (*t < window_end_ - coord_.lookahead()) {
                throw SimError(fmt::format("internal: {} resumes from TWAIT at {} ps, below the window's lower bound "
                                           "{} ps (waiting since {} ps)",
                                           where(blk), *t, window_end_ - coord_.lookahead(),
                                           blk.wait_since));
            }
            blk.waiting = false;
            parked_[static_cast<std::size_t>(b)] = 0;
            stall_ps_ += *t - blk.wait_since;
            blk.now_ref() = *t + cost_.twait_poll_ps;
            events_.push(Event{blk.now(), b});
        } else {
            copy_memo(w, blk);
            waiters_[keep++] = w;
        }
    }
    if (keep != waiters_.size()) waiters_changed_ = true;
    waiters_.resize(keep);
}

}  // namespace tandem
