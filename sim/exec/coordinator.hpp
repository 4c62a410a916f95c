#pragma once
// Conservative synchronisation of the logical processes (one per stream that is running a
// kernel) and of the host threads, so that simulated results never depend on host timing.
//
// Time is cut into windows. In a window, every participant simulates the events with time below
// the window end, independently and in parallel. Every cross-process effect is a message visible
// no sooner than `lookahead` after it was produced, so nothing produced inside a window can
// matter inside it; messages are delivered at the barrier in a total order. The next window ends
// at (the lowest time anything can still happen) + lookahead, where that lower bound counts the
// participants' next events, delivered-but-future signal writes, and each running host thread's
// clock (a host may still launch work at its current time).
//
// A participant with nothing to do in the next window (its next event lies beyond it, and no
// signal write it waits on becomes visible inside it) is not woken: it stays arrived and sleeps
// through the window. With many streams on few host cores this saves most of the thread
// switches; it changes nothing simulated, because such a participant would only have arrived
// again at once.
//
// If no participant has an event, no write is pending and no host can act, the simulated kernel
// is deadlocked: the coordinator fails the run with every waiter's description.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "sim/exec/message.hpp"
#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

// Thrown in every thread when the run was stopped by an error raised elsewhere; programs report
// the coordinator's first error, not these.
class SimAborted : public std::runtime_error {
public:
    SimAborted() : std::runtime_error("simulation aborted") {}
};

class Participant {
public:
    virtual ~Participant() = default;
    // Lines describing what is blocked (for the deadlock report). Called at a barrier only.
    virtual std::vector<std::string> describe_waiters() const = 0;

    // Signalled (under the coordinator's lock) when a window this participant must run opens.
    std::condition_variable released_cv;
};

class Coordinator {
public:
    Coordinator(SimTime lookahead_ps, MessageSink& sink);

    SimTime lookahead() const { return lookahead_; }

    // ---- logical processes ----
    // Join the current window; returns its end (process events with time below it). Clears the
    // lower bound `bound_to_clear` in the same step (the stream's queued kernel is now running
    // and its events stand for it).
    SimTime join(Participant& p, int bound_to_clear = -1);
    // Hand in this window's messages, the time of the next local event (kNever if none) and the
    // signal words its blocked TWAITs watch; wait until a window opens that this participant has
    // to run (one holding its next event or a write to a watched word); returns that window's
    // end. Throws SimAborted if the run failed.
    // `run_next`: run the next window whatever happens (the participant has pending checks).
    SimTime arrive(Participant& p, SimTime next_event, std::vector<Message>& outbox,
                   const std::vector<SignalAddr>& watched, bool run_next);
    // Leave (kernel done); hands in the last messages. `on_leave` runs under the lock in the same
    // step, so whatever the departure unblocks (a host's clock) bounds the very next window.
    void leave(Participant& p, std::vector<Message>& outbox, const std::function<void()>& on_leave = {});

    // ---- lower bounds of things that are not running yet ----
    // A host thread (its clock while it runs) or a stream with a queued kernel (when it can
    // start) may still create work at that time: windows must not pass it.
    int register_bound(std::optional<SimTime> initial);
    // Set or clear a bound (nullopt: nothing to wait for). Call with the lock held (inside update()).
    void set_bound_locked(int id, std::optional<SimTime> bound);
    // Host-side messages (host writes to device signals), delivered at the next barrier.
    void post_locked(Message m);

    // Run `f` under the coordinator lock, then re-check whether the window can advance.
    void update(const std::function<void()>& f);
    // Wait under the lock until `pred()` holds; throws SimAborted if the run fails meanwhile.
    void wait(const std::function<bool()>& pred);

    // ---- errors ----
    // Stop the run: the first message is kept, every waiting thread wakes with SimAborted.
    void fail(const std::string& message);
    bool failed() const;
    std::string error() const;

    std::uint64_t windows() const;

private:
    void try_advance_locked();
    // Open the next window and wake whoever must run in it; false if it cannot open yet (a host
    // holds it back, or the run failed).
    bool advance_window_locked();
    void deliver_locked();
    SimTime lower_bound_locked();
    void throw_if_failed_locked() const;

    const SimTime lookahead_;
    MessageSink& sink_;
    mutable std::mutex mu_;
    // Logical processes wait on their own released_cv (only those with work in a window are
    // woken); hosts and streams waiting for a state change wait here.
    std::condition_variable state_cv_;

    struct Slot {
        Participant* p;
        bool arrived;
        SimTime next_event;
        std::vector<SignalAddr> watched;
        bool run_next;
    };
    // A delivered signal write not yet visible at the current window's end: it wakes the
    // participants watching its words in the window it becomes visible in.
    struct FutureSignalWrite {
        SimTime visible_at;
        int rank;
        std::int64_t first;  // words [first, end)
        std::int64_t end;
    };
    bool must_run_locked(const Slot& s, SimTime window_end) const;
    void wake_all_locked();
    std::vector<Slot> slots_;
    std::size_t arrived_ = 0;
    SimTime window_end_ = 0;
    std::uint64_t generation_ = 0;
    std::vector<std::optional<SimTime>> bounds_;
    std::vector<Message> pending_;
    std::priority_queue<SimTime, std::vector<SimTime>, std::greater<>> future_writes_;
    std::vector<FutureSignalWrite> future_signal_writes_;
    std::uint64_t delivered_ = 0;
    bool failed_ = false;
    std::string error_;
};

}  // namespace tandem
