#include "sim/exec/worker_pool.hpp"

#include <algorithm>

#include "sim/sim_error.hpp"

namespace tandem {

WorkerPool::WorkerPool(int threads) : thread_count_(static_cast<std::size_t>(threads)) {
    if (threads < 1) throw SimError("worker pool: need at least 1 thread, got " + std::to_string(threads));
}

WorkerPool::~WorkerPool() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
}

void WorkerPool::start_locked() {
    while (threads_.size() < thread_count_) threads_.emplace_back([this] { worker_main(); });
}

void WorkerPool::run(const std::vector<TaskFn>& tasks) {
    if (tasks.empty()) return;
    Group group;
    group.tasks = &tasks;
    std::unique_lock lock(mu_);
    start_locked();
    queue_.push_back(&group);
    work_cv_.notify_all();
    group.done_cv.wait(lock, [&] { return group.finished == tasks.size(); });
    if (!group.error.empty()) throw SimError(group.error);
}

void WorkerPool::worker_main() {
    WorkScratch scratch;
    std::unique_lock lock(mu_);
    for (;;) {
        work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        Group& g = *queue_.front();
        const std::size_t i = g.next++;
        if (g.next == g.tasks->size()) queue_.pop_front();
        lock.unlock();
        std::string error;
        try {
            (*g.tasks)[i](scratch);
        } catch (const std::exception& e) {
            error = e.what();
        }
        lock.lock();
        if (!error.empty() && g.error.empty()) {
            g.error = std::move(error);
            // Skip the tasks not yet taken.
            if (g.next < g.tasks->size()) {
                g.finished += g.tasks->size() - g.next;
                g.next = g.tasks->size();
                std::erase(queue_, &g);
            }
        }
        if (++g.finished == g.tasks->size()) g.done_cv.notify_all();
    }
}

}  // namespace tandem
