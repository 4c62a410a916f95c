#include "sim/exec/coordinator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/burst_room.hpp"

namespace tandem {

Coordinator::Coordinator(SimTime lookahead_ps, MessageSink& sink, int threads)
    : lookahead_(lookahead_ps), threads_(threads), sink_(sink) {
    if (lookahead_ps <= 0) throw SimError("the coordinator's lookahead must be positive (check the profile's latencies)");
    if (threads < 1) throw SimError("the coordinator's pool needs at least 1 thread, got " + std::to_string(threads));
}

Coordinator::~Coordinator() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    ready_cv_.notify_all();
    for (auto& t : pool_) t.join();
}

void Coordinator::join(Participant& p, int bound_to_clear) {
    std::lock_guard lock(mu_);
    throw_if_failed_locked();
    p.slot_ = slots_.size();
    slots_.push_back(Slot{&p, false, kNever, {}, true, 0, {}, false});
    if (pool_.empty()) {
        ready_.resize(static_cast<std::size_t>(threads_));
        for (int i = 0; i < threads_; ++i) pool_.emplace_back([this, i] { pool_main(static_cast<std::size_t>(i)); });
    }
    slots_.back().home = static_cast<std::size_t>(next_home_++) % pool_.size();
    if (bound_to_clear >= 0) set_bound_locked(bound_to_clear, std::nullopt);
    queue_locked(slots_.back());
    ready_cv_.notify_all();
}

namespace {

// A stream's window of messages moved into the barrier's. The stream's vector keeps its room
// unless that was a burst's (sim/burst_room.hpp): then it goes to `freed`, for the caller to
// free once it has let the lock go. A stream keeping its largest burst's room held as much again
// as the barrier's own vector.
void take_messages(std::vector<Message>& outbox, std::vector<Message>& pending, std::vector<Message>& freed) {
    for (Message& m : outbox) pending.push_back(std::move(m));
    outbox.clear();
    if (holds_burst_room(outbox)) freed.swap(outbox);
}

}  // namespace

void Coordinator::arrive(Participant& p, SimTime next_event, std::vector<Message>& outbox,
                         const std::vector<SignalAddr>* watched, bool run_next) {
    std::vector<Message> freed;  // destroyed after the lock is released
    std::lock_guard lock(mu_);
    throw_if_failed_locked();
    take_messages(outbox, pending_, freed);
    Slot& s = slots_[p.slot_];
    s.arrived = true;
    s.next_event = next_event;
    if (watched != nullptr) set_watched_locked(s, *watched);
    s.run_next = run_next;
    ++arrived_;
    try_advance_locked();
    // Whoever waits for the machine to park (Runtime::wait_until_parked) re-checks.
    if (arrived_ == slots_.size()) notify_waiters_locked();
}

void Coordinator::set_watched_locked(Slot& s, const std::vector<SignalAddr>& watched) {
    s.watched.assign(watched.begin(), watched.end());  // reuses the slot's capacity
    // Usually every word is on one rank (a block waits on its own rank's memory), so the
    // registration rarely changes.
    std::vector<int>& ranks = rank_scratch_;
    ranks.clear();
    for (const SignalAddr& a : watched)
        if (std::find(ranks.begin(), ranks.end(), a.rank) == ranks.end()) ranks.push_back(a.rank);
    std::sort(ranks.begin(), ranks.end());
    if (ranks == s.watched_ranks) return;
    for (int r : s.watched_ranks) std::erase(watchers_[static_cast<std::size_t>(r)], s.p);
    for (int r : ranks) {
        if (static_cast<std::size_t>(r) >= watchers_.size()) watchers_.resize(static_cast<std::size_t>(r) + 1);
        watchers_[static_cast<std::size_t>(r)].push_back(s.p);
    }
    s.watched_ranks = ranks;
}

void Coordinator::mark_watchers_locked(const FutureSignalWrite& w) {
    if (static_cast<std::size_t>(w.rank) >= watchers_.size()) return;
    for (Participant* p : watchers_[static_cast<std::size_t>(w.rank)]) {
        Slot& s = slots_[p->slot_];
        if (s.written) continue;
        for (const SignalAddr& a : s.watched) {
            if (a.rank == w.rank && a.address >= w.first && a.address < w.end) {
                s.written = true;
                break;
            }
        }
    }
}

void Coordinator::remove_slot_locked(std::size_t index) {
    Slot& s = slots_[index];
    if (s.arrived) --arrived_;
    for (int r : s.watched_ranks) std::erase(watchers_[static_cast<std::size_t>(r)], s.p);
    if (index + 1 != slots_.size()) {
        s = std::move(slots_.back());
        s.p->slot_ = index;
    }
    slots_.pop_back();
}

void Coordinator::queue_locked(Slot& s) {
    s.arrived = false;
    ready_[s.home].push_back(Ready{s.p, window_end_});
    ++queued_;
}

void Coordinator::pool_main(std::size_t index) {
    std::unique_lock lock(mu_);
    for (;;) {
        ready_cv_.wait(lock, [&] { return stopping_ || queued_ > 0; });
        if (queued_ == 0) return;  // stopping
        // Its own queue first; else the fullest other one.
        std::size_t from = index;
        if (ready_[index].empty()) {
            for (std::size_t i = 0; i < ready_.size(); ++i)
                if (ready_[i].size() > ready_[from].size()) from = i;
        }
        const Ready r = ready_[from].front();
        ready_[from].pop_front();
        --queued_;
        lock.unlock();
        r.p->run_window(r.window_end);
        lock.lock();
    }
}

void Coordinator::leave(Participant& p, std::vector<Message>& outbox, const std::function<void()>& on_leave) {
    std::vector<Message> freed;  // destroyed after the lock is released
    std::lock_guard lock(mu_);
    if (on_leave) on_leave();
    take_messages(outbox, pending_, freed);
    if (p.slot_ < slots_.size() && slots_[p.slot_].p == &p) remove_slot_locked(p.slot_);
    try_advance_locked();
    notify_waiters_locked();
}

int Coordinator::register_bound(std::optional<SimTime> initial, bool holds) {
    std::lock_guard lock(mu_);
    bounds_.push_back(initial);
    bound_holds_.push_back(holds ? 1 : 0);
    acting_.push_back(0);
    if (holds && initial) ++holds_;
    return static_cast<int>(bounds_.size()) - 1;
}

void Coordinator::set_bound_locked(int id, std::optional<SimTime> bound) {
    std::optional<SimTime>& b = bounds_.at(static_cast<std::size_t>(id));
    if (bound_holds_[static_cast<std::size_t>(id)] != 0) holds_ += (bound ? 1 : 0) - (b ? 1 : 0);
    b = bound;
}

void Coordinator::set_acting_locked(int id, bool acting) {
    char& a = acting_.at(static_cast<std::size_t>(id));
    holds_ += (acting ? 1 : 0) - (a != 0 ? 1 : 0);
    a = acting ? 1 : 0;
}

bool Coordinator::parked_locked(const std::vector<int>& bound_ids) const {
    if (arrived_ != slots_.size()) return false;
    for (int id : bound_ids) {
        if (bounds_.at(static_cast<std::size_t>(id)).has_value()) return false;
    }
    return true;
}

void Coordinator::post_locked(Message m) { pending_.push_back(std::move(m)); }

void Coordinator::update(const std::function<void()>& f) {
    std::lock_guard lock(mu_);
    f();
    try_advance_locked();
    notify_waiters_locked();
}

void Coordinator::update_quietly(const std::function<void()>& f) {
    std::lock_guard lock(mu_);
    f();
    try_advance_locked();
}

void Coordinator::notify_waiters_locked() {
    for (Waiter* w : waiters_) {
        if ((failed_ && !w->even_if_failed) || (*w->pred)()) w->cv.notify_one();
    }
}

void Coordinator::wait_locked(std::unique_lock<std::mutex>& lock, const std::function<bool()>& pred,
                              bool even_if_failed) {
    auto done = [&] { return (failed_ && !even_if_failed) || pred(); };
    if (done()) return;
    Waiter w{{}, &pred, even_if_failed};
    waiters_.push_back(&w);
    while (!done()) w.cv.wait(lock);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &w));
}

void Coordinator::wait(const std::function<bool()>& pred) {
    std::unique_lock lock(mu_);
    wait_locked(lock, pred, false);
    throw_if_failed_locked();
}

void Coordinator::wait_even_if_failed(const std::function<bool()>& pred) {
    std::unique_lock lock(mu_);
    wait_locked(lock, pred, true);
}

void Coordinator::fail(const std::string& message) {
    std::lock_guard lock(mu_);
    if (!failed_) {
        failed_ = true;
        failed_flag_.store(true, std::memory_order_release);
        error_ = message;
    }
    wake_all_locked();
}

void Coordinator::wake_all_locked() {
    // Every participant sleeping through windows runs once more, sees the failure and leaves.
    for (Slot& s : slots_) {
        if (!s.arrived) continue;  // running, or already queued: it will see the failure
        --arrived_;
        queue_locked(s);
    }
    ready_cv_.notify_all();
    notify_waiters_locked();
}

bool Coordinator::failed() const { return failed_flag_.load(std::memory_order_acquire); }

std::string Coordinator::error() const {
    std::lock_guard lock(mu_);
    return error_;
}

std::uint64_t Coordinator::windows() const {
    std::lock_guard lock(mu_);
    return generation_;
}

SimTime Coordinator::window_end() const {
    std::lock_guard lock(mu_);
    return window_end_;
}

void Coordinator::throw_if_failed_locked() const {
    if (failed_) throw SimAborted();
}

void Coordinator::deliver_locked() {
    if (pending_.empty()) return;
    std::sort(pending_.begin(), pending_.end(), message_order);
    for (const Message& m : pending_) {
        sink_.deliver(m, delivered_++);
        if (m.kind == Message::Kind::Signal) {
            future_writes_.push(m.visible_at);
            future_signal_writes_.push(FutureSignalWrite{m.visible_at, m.dst_rank, m.address, m.address + 4LL * m.count});
        }
    }
    pending_.clear();
}

SimTime Coordinator::lower_bound_locked() {
    while (!future_writes_.empty() && future_writes_.top() < window_end_) future_writes_.pop();
    SimTime lb = future_writes_.empty() ? kNever : future_writes_.top();
    for (const Slot& s : slots_) lb = std::min(lb, s.next_event);
    for (const auto& b : bounds_)
        if (b) lb = std::min(lb, *b);
    return lb;
}

void Coordinator::try_advance_locked() {
    // A host acting or a kernel about to join holds the windows: where the next one ends must
    // not depend on how far those threads got (see the header).
    if (failed_ || arrived_ < slots_.size() || holds_ > 0) return;
    deliver_locked();
    if (slots_.empty()) return;  // idle: writes delivered, nobody to release
    // Windows in which nobody has anything to do are passed at once, without waking anyone.
    while (arrived_ == slots_.size()) {
        if (!advance_window_locked()) return;
    }
}

bool Coordinator::advance_window_locked() {
    const SimTime lb = lower_bound_locked();
    if (lb >= kNever) {
        std::vector<std::string> lines;
        for (const Slot& s : slots_) {
            for (auto& line : s.p->describe_waiters()) lines.push_back(std::move(line));
        }
        std::sort(lines.begin(), lines.end());  // deterministic report, whatever the join order
        std::string msg = "deadlock: every running block waits on a signal that no pending write or running "
                          "stream can change";
        // A named cause (blocks that can never be scheduled) heads the report.
        for (auto it = lines.begin(); it != lines.end(); ++it) {
            if (it->starts_with(kUnschedulableSpinnersCause)) {
                msg = "deadlock: " + *it;
                lines.erase(it);
                break;
            }
        }
        for (const auto& line : lines) msg += "\n  " + line;
        failed_ = true;
        failed_flag_.store(true, std::memory_order_release);
        error_ = msg;
        wake_all_locked();
        return false;
    }
    const SimTime new_end = lb + lookahead_;
    if (new_end <= window_end_) return false;  // stalled until a host thread acts
    sink_.fold_before(std::min(lb, window_end_));
    window_end_ = new_end;
    ++generation_;
    arrived_ = 0;
    // The signal writes becoming visible in this window wake the participants watching them.
    while (!future_signal_writes_.empty() && future_signal_writes_.top().visible_at < new_end) {
        mark_watchers_locked(future_signal_writes_.top());
        future_signal_writes_.pop();
    }
    bool queued = false;
    for (Slot& s : slots_) {
        if (s.run_next || s.next_event < new_end || s.written) {
            queue_locked(s);
            queued = true;
        } else {
            ++arrived_;  // sleeps through this window: it would only arrive again
        }
        s.written = false;
    }
    if (queued) ready_cv_.notify_all();
    return true;
}

}  // namespace tandem
