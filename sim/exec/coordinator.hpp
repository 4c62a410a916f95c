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
// Logical processes are not threads: when a window opens, the participants that must run in it
// are queued, and a pool of host threads (the machine's thread budget) runs each one's window and hands
// its arrival back. A participant with nothing to do in the next window (its next event lies
// beyond it, and no signal write it waits on becomes visible inside it) is not queued: it stays
// arrived and sleeps through the window. With many streams on few host cores this keeps the
// cores busy with little thread switching; it changes nothing simulated, because what a
// participant does in a window depends only on what was delivered before the window opened,
// not on which thread runs it or when.
//
// Where the windows are cut must not depend on host timing either: a stream's GM traffic is
// stamped with the end of the window it was booked in (sim/mem/memory_view.hpp), so the cuts are
// part of the results. A window's end comes from the lower bound, which counts the hosts' clocks
// and the queued kernels' start times; a host thread's clock moves, and a stream thread joins
// its queued kernel, whenever those threads get to it. So no window opens while a host thread
// is acting (running its program, between its start or release and its next wait) or a queued
// kernel has not joined yet: each window opens on a state that only simulated events made.
//
// If no participant has an event, no write is pending and no host can act, the simulated kernel
// is deadlocked: the coordinator fails the run with every waiter's description.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
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

// How a deadlock report's cause line starts when blocks spin on work of blocks that can never be
// scheduled because the spinners hold every core (the sanitizer's class of that name).
inline constexpr const char* kUnschedulableSpinnersCause = "unschedulable spinners (more blocks than cores)";

class Participant {
public:
    virtual ~Participant() = default;
    // Lines describing what is blocked (for the deadlock report). Called at a barrier only.
    virtual std::vector<std::string> describe_waiters() const = 0;
    // Run the window ending at `window_end` (on a pool thread), then hand in the arrival with
    // Coordinator::arrive() or leave with leave(); touch nothing of this participant after that
    // call (another pool thread may already be running its next window). If the run has
    // failed, leave at once.
    virtual void run_window(SimTime window_end) = 0;

private:
    friend class Coordinator;
    std::size_t slot_ = 0;  // its place in the coordinator's slots while it has joined
};

class Coordinator {
public:
    // `threads`: the pool's size (ClusterOptions::host_threads), at least 1.
    Coordinator(SimTime lookahead_ps, MessageSink& sink, int threads);

    SimTime lookahead() const { return lookahead_; }

    Coordinator(const Coordinator&) = delete;
    Coordinator& operator=(const Coordinator&) = delete;
    ~Coordinator();

    // ---- logical processes ----
    // Join: the participant is queued to run the current window on the pool. Clears the lower
    // bound `bound_to_clear` in the same step (the stream's queued kernel is now running and its
    // events stand for it). Throws SimAborted if the run has failed.
    void join(Participant& p, int bound_to_clear = -1);
    // Hand in this window's messages, the time of the next local event (kNever if none) and the
    // signal words its blocked TWAITs watch (nullptr: the same as at its last arrive since it
    // joined; none before the first). The participant is queued again for the next window
    // it has to run (one holding its next event or a write to a watched word). Returns at once;
    // throws SimAborted (without arriving) if the run failed.
    // `run_next`: run the next window whatever happens (the participant has pending checks).
    void arrive(Participant& p, SimTime next_event, std::vector<Message>& outbox, const std::vector<SignalAddr>* watched,
                bool run_next);
    // Leave (kernel done); hands in the last messages. `on_leave` runs under the lock in the same
    // step, so whatever the departure unblocks (a host's clock) bounds the very next window.
    void leave(Participant& p, std::vector<Message>& outbox, const std::function<void()>& on_leave = {});

    // ---- lower bounds of things that are not running yet ----
    // A host thread (its clock while it runs) or a stream with a queued kernel (when it can
    // start) may still create work at that time: windows must not pass it. `holds`: while the
    // bound is set, no window opens at all (a stream's queued kernel, which its thread is about
    // to join: where the windows are cut must not depend on when it gets there).
    int register_bound(std::optional<SimTime> initial, bool holds = false);
    // Set or clear a bound (nullopt: nothing to wait for). Call with the lock held (inside update()).
    void set_bound_locked(int id, std::optional<SimTime> bound);
    // Whether the host thread of bound `id` is acting: running its program, which may still move
    // its clock or queue kernels. No window opens while any host acts (see above). Call with the
    // lock held.
    void set_acting_locked(int id, bool acting);
    // Whether nothing can run until a host acts: every running participant has arrived at the
    // window barrier (and the window could not advance), and none of `bound_ids` (streams'
    // queued-kernel bounds) is set, so no kernel is about to join. Call with the lock held
    // (inside wait()): the state holds until a host moves its clock.
    bool parked_locked(const std::vector<int>& bound_ids) const;
    // Host-side messages (host writes to device signals), delivered at the next barrier.
    void post_locked(Message m);

    // Run `f` under the coordinator lock, then re-check whether the window can advance and wake
    // the waiting threads whose condition now holds.
    void update(const std::function<void()>& f);
    // The same for a change no waiting thread's condition depends on (a host posting a signal
    // write): nobody is woken to re-check.
    void update_quietly(const std::function<void()>& f);
    // Wait under the lock until `pred()` holds; throws SimAborted if the run fails meanwhile.
    void wait(const std::function<bool()>& pred);
    // Wait under the lock until `pred()` holds, failed run or not (`pred` must become true).
    void wait_even_if_failed(const std::function<bool()>& pred);

    // ---- errors ----
    // Stop the run: the first message is kept, every waiting thread wakes with SimAborted.
    void fail(const std::string& message);
    bool failed() const;
    std::string error() const;

    std::uint64_t windows() const;
    // The end of the window open now (0 before the first): how far the run has simulated, for a
    // progress report read from another thread. Takes the lock.
    SimTime window_end() const;

private:
    void try_advance_locked();
    // Open the next window and wake whoever must run in it; false if it cannot open yet (a host
    // holds it back, or the run failed).
    bool advance_window_locked();
    void deliver_locked();
    SimTime lower_bound_locked();
    void throw_if_failed_locked() const;

    const SimTime lookahead_;
    const int threads_;
    MessageSink& sink_;
    mutable std::mutex mu_;
    // A host or stream thread blocked in wait(): it is woken only when its condition holds (or
    // the run fails), so a state change costs a predicate call per waiter, not a thread switch
    // for each of the hundreds of threads of a large cluster.
    struct Waiter {
        std::condition_variable cv;
        const std::function<bool()>* pred;
        bool even_if_failed;
    };
    std::vector<Waiter*> waiters_;
    void notify_waiters_locked();
    void wait_locked(std::unique_lock<std::mutex>& lock, const std::function<bool()>& pred, bool even_if_failed);
    // The pool running participants' windows.
    struct Ready {
        Participant* p;
        SimTime window_end;
    };
    // One queue per pool thread: a participant is queued on the same thread each time (its
    // state stays in that core's cache); an idle thread takes work from the others' queues.
    std::vector<std::deque<Ready>> ready_;
    std::size_t queued_ = 0;  // entries in all queues
    std::condition_variable ready_cv_;
    std::vector<std::thread> pool_;
    bool stopping_ = false;
    int next_home_ = 0;
    std::atomic<bool> failed_flag_{false};  // failed_, readable without the lock

    struct Slot {
        Participant* p;
        bool arrived;
        SimTime next_event;
        std::vector<SignalAddr> watched;
        bool run_next;
        std::size_t home = 0;  // the pool thread whose queue it goes on
        std::vector<int> watched_ranks;  // the distinct ranks of `watched` (its watchers_ entries)
        bool written = false;  // a write to a watched word becomes visible in the window opening
    };
    // A delivered signal write not yet visible at the current window's end: it wakes the
    // participants watching its words in the window it becomes visible in.
    struct FutureSignalWrite {
        SimTime visible_at;
        int rank;
        std::int64_t first;  // words [first, end)
        std::int64_t end;
        bool operator>(const FutureSignalWrite& o) const { return visible_at > o.visible_at; }
    };
    void wake_all_locked();
    // Queue `s` to run the current window on the pool (the caller wakes the pool).
    void queue_locked(Slot& s);
    void pool_main(std::size_t index);
    // Marks the participants watching a word of `w` (the write becomes visible in the window
    // that is opening).
    void mark_watchers_locked(const FutureSignalWrite& w);
    void set_watched_locked(Slot& s, const std::vector<SignalAddr>& watched);
    void remove_slot_locked(std::size_t index);
    // Slot of a participant that has joined: O(1), whatever the number of streams.
    std::vector<Slot> slots_;
    // For each rank, the participants watching a signal word of it.
    std::vector<std::vector<Participant*>> watchers_;
    std::vector<int> rank_scratch_;
    std::size_t arrived_ = 0;
    SimTime window_end_ = 0;
    std::uint64_t generation_ = 0;
    std::vector<std::optional<SimTime>> bounds_;
    std::vector<char> bound_holds_;  // by bound id: a set bound holds the windows (register_bound)
    std::vector<char> acting_;       // by bound id: a host acting (set_acting_locked)
    int holds_ = 0;                  // set holding bounds plus acting hosts: no window opens while > 0
    std::vector<Message> pending_;
    std::priority_queue<SimTime, std::vector<SimTime>, std::greater<>> future_writes_;
    std::priority_queue<FutureSignalWrite, std::vector<FutureSignalWrite>, std::greater<>> future_signal_writes_;
    std::uint64_t delivered_ = 0;
    bool failed_ = false;
    std::string error_;
};

}  // namespace tandem
