#pragma once
// A cluster's pool of host threads for work done outside the simulated timeline (completing
// deferred products at kernel end). `threads` threads (the machine's budget), started on first use; every
// logical process hands its tasks to the same pool, so several streams finishing at once share
// the cores instead of each starting its own threads. Each worker keeps its scratch buffers
// from task to task.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/mem/gm_deferred.hpp"

namespace tandem {

class WorkerPool {
public:
    using TaskFn = std::function<void(WorkScratch&)>;

    // Throws SimError unless threads >= 1.
    explicit WorkerPool(int threads);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // Runs every task on the pool and returns when all are done (the caller waits). If tasks
    // throw, the rest of the group is skipped and the first message is rethrown as SimError.
    // Tasks must not call run() themselves.
    void run(const std::vector<TaskFn>& tasks);

private:
    struct Group {
        const std::vector<TaskFn>* tasks;
        std::size_t next = 0;      // first task not yet taken
        std::size_t finished = 0;  // tasks done (or skipped)
        std::string error;
        std::condition_variable done_cv;
    };
    void worker_main();
    void start_locked();

    std::size_t thread_count_;
    std::mutex mu_;
    std::condition_variable work_cv_;
    std::deque<Group*> queue_;  // groups with tasks not yet taken, in arrival order
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace tandem
