#include "sim/exec/coordinator.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tandem {

Coordinator::Coordinator(SimTime lookahead_ps, MessageSink& sink) : lookahead_(lookahead_ps), sink_(sink) {
    if (lookahead_ps <= 0) throw SimError("the coordinator's lookahead must be positive (check the profile's latencies)");
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
    slots_.push_back(Slot{&p, false, kNever, {}, true});
    if (pool_.empty()) {
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        ready_.resize(threads);
        for (unsigned i = 0; i < threads; ++i) pool_.emplace_back([this, i] { pool_main(i); });
    }
    slots_.back().home = static_cast<std::size_t>(next_home_++) % pool_.size();
    if (bound_to_clear >= 0) bounds_.at(static_cast<std::size_t>(bound_to_clear)).reset();
    queue_locked(slots_.back());
}

void Coordinator::arrive(Participant& p, SimTime next_event, std::vector<Message>& outbox,
                         const std::vector<SignalAddr>& watched, bool run_next) {
    std::lock_guard lock(mu_);
    throw_if_failed_locked();
    for (Message& m : outbox) pending_.push_back(std::move(m));
    outbox.clear();
    auto it = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.p == &p; });
    it->arrived = true;
    it->next_event = next_event;
    it->watched.assign(watched.begin(), watched.end());  // reuses the slot's capacity
    it->run_next = run_next;
    ++arrived_;
    try_advance_locked();
}

void Coordinator::queue_locked(Slot& s) {
    s.arrived = false;
    ready_[s.home].push_back(Ready{s.p, window_end_});
    ++queued_;
    ready_cv_.notify_all();
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
    std::lock_guard lock(mu_);
    if (on_leave) on_leave();
    for (Message& m : outbox) pending_.push_back(std::move(m));
    outbox.clear();
    auto it = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.p == &p; });
    if (it != slots_.end()) {
        if (it->arrived) --arrived_;
        slots_.erase(it);
    }
    try_advance_locked();
    state_cv_.notify_all();
}

int Coordinator::register_bound(std::optional<SimTime> initial) {
    std::lock_guard lock(mu_);
    bounds_.push_back(initial);
    return static_cast<int>(bounds_.size()) - 1;
}

void Coordinator::set_bound_locked(int id, std::optional<SimTime> bound) { bounds_.at(static_cast<std::size_t>(id)) = bound; }

void Coordinator::post_locked(Message m) { pending_.push_back(std::move(m)); }

void Coordinator::update(const std::function<void()>& f) {
    std::lock_guard lock(mu_);
    f();
    try_advance_locked();
    state_cv_.notify_all();
}

void Coordinator::wait(const std::function<bool()>& pred) {
    std::unique_lock lock(mu_);
    state_cv_.wait(lock, [&] { return failed_ || pred(); });
    throw_if_failed_locked();
}

void Coordinator::wait_even_if_failed(const std::function<bool()>& pred) {
    std::unique_lock lock(mu_);
    state_cv_.wait(lock, pred);
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
    state_cv_.notify_all();
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
            future_signal_writes_.push_back(FutureSignalWrite{m.visible_at, m.dst_rank, m.address, m.address + 4LL * m.count});
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
    if (failed_ || arrived_ < slots_.size()) return;
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
    for (Slot& s : slots_) {
        if (must_run_locked(s, new_end)) {
            queue_locked(s);
        } else {
            ++arrived_;  // sleeps through this window: it would only arrive again
        }
    }
    std::erase_if(future_signal_writes_, [&](const FutureSignalWrite& w) { return w.visible_at < new_end; });
    return true;
}

bool Coordinator::must_run_locked(const Slot& s, SimTime window_end) const {
    if (s.run_next || s.next_event < window_end) return true;
    for (const FutureSignalWrite& w : future_signal_writes_) {
        if (w.visible_at >= window_end) continue;
        for (const SignalAddr& a : s.watched)
            if (a.rank == w.rank && a.address >= w.first && a.address < w.end) return true;
    }
    return false;
}

}  // namespace tandem
