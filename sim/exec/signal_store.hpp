#pragma once
// The signal words of one rank, with their history in simulated time. Writes arrive only at
// window barriers (they are messages stamped with the time they become visible), so during a
// window the store is read-only and every reader sees the value "as of" its own simulated time:
// that is what makes TWAIT resolve at the exact time its condition first held, whatever the
// host thread timing.
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/exec/signal.hpp"
#include "sim/sanitize/signal_stamp.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct SignalWord;  // one word's base value and unfolded ops (below)

class SignalStore {
public:
    struct Op {
        SimTime visible_at;
        std::uint64_t order;  // total order among ops at the same time (barrier merge order)
        NotifyOp op;
        std::int32_t value;
        std::shared_ptr<const SanSignalStamp> stamp;  // the writer's clock and name, under --sanitize
    };

    // Value of the word at `address` as of time t (all ops visible at or before t applied).
    std::int32_t value_at(std::int64_t address, SimTime t) const;

    // The first time in [since, before) at which `value cmp expected` holds, given the ops known.
    std::optional<SimTime> first_time_true(std::int64_t address, CmpOp cmp, std::int32_t expected, SimTime since,
                                           SimTime before) const;
    // The same for a word found by find() (null: never written, value 0). A waiter keeps the
    // pointer across windows instead of hashing its address each time: words are created only at
    // barriers and never erased, and their nodes never move.
    static std::optional<SimTime> first_time_true(const SignalWord* word, CmpOp cmp, std::int32_t expected, SimTime since,
                                                  SimTime before);
    // The same, also giving the time of the first op at or after `before` (kNever if none): until
    // a new op is inserted, the answer for any `before` up to that time is the same.
    static std::optional<SimTime> first_time_true(const SignalWord* word, CmpOp cmp, std::int32_t expected, SimTime since,
                                                  SimTime before, SimTime& next_op_at);
    const SignalWord* find(std::int64_t address) const;
    // Words that exist (they are created at barriers only, so this is constant inside a window).
    std::size_t word_count() const { return words_.size(); }

    // Under --sanitize: joins into `into` the clocks of every write of the word visible at or
    // before t (what a TWAIT or TTEST that read it then has synchronised with).
    void acquire_clocks(std::int64_t address, SimTime t, VectorClock& into) const;
    // Under --sanitize: the last write of the word visible at or before t (null: none, or
    // written without --sanitize).
    const SanSignalStamp* last_write(std::int64_t address, SimTime t) const;

    // Barrier-only mutators.
    void insert(std::int64_t address, const Op& op);
    void fold_before(SimTime horizon);  // merge ops visible before `horizon` into the base value

    static std::int32_t apply(std::int32_t v, const Op& op) {
        return op.op == NotifyOp::Set ? op.value : static_cast<std::int32_t>(static_cast<std::uint32_t>(v) + static_cast<std::uint32_t>(op.value));
    }

private:
    std::unordered_map<std::int64_t, SignalWord> words_;
    // Words with unfolded ops (node pointers are stable), each beside the time of its first op
    // when it was last looked at, so that a barrier passes over the words with nothing due
    // without touching them (a comm kernel writes its flags long ahead: hundreds of thousands of
    // words wait at 64 ranks). An op inserted later with an earlier time may make that a little
    // late; folding is only a word's compaction (every read applies the unfolded ops it covers).
    struct Dirty {
        SimTime first_op_at;
        SignalWord* word;
    };
    std::vector<Dirty> dirty_;
};

// What --sanitize keeps of a word's folded writes (a run without it keeps none: a comm kernel
// writes a flag word per tile and peer, close to a million words at 64 ranks).
struct SignalWordClocks {
    VectorClock clock;                            // joined clocks of the folded writes
    std::shared_ptr<const SanSignalStamp> stamp;  // the last folded write's
};

struct SignalWord {
    std::int32_t base = 0;
    std::vector<SignalStore::Op> ops;         // sorted by (visible_at, order)
    std::uint64_t version = 0;                // ops inserted so far (folding does not count)
    std::unique_ptr<SignalWordClocks> folded;  // under --sanitize, once a stamped write is folded
};

}  // namespace tandem
