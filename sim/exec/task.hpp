#pragma once
// Task: the coroutine type kernel code is written as. A kernel block is a `Task`; a helper that
// contains `co_await` is a `Task` too and is awaited by its caller. Suspension only happens at
// instructions that touch state shared beyond one core (GM bandwidth, links, signals); the
// logical process then resumes the innermost suspended coroutine in simulated-time order.
#include <coroutine>
#include <exception>
#include <utility>

namespace tandem {

class [[nodiscard]] Task {
public:
    struct promise_type {
        std::coroutine_handle<> continuation;  // who awaits us (empty for a block's top level)
        std::exception_ptr error;

        Task get_return_object() { return Task{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct FinalAwaiter {
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                auto next = h.promise().continuation;
                return next ? next : std::noop_coroutine();
            }
            void await_resume() noexcept {}
        };
        FinalAwaiter final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { error = std::current_exception(); }
    };

    Task() = default;
    explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() { destroy(); }

    // Awaiting a Task runs it to completion (through any suspensions) before the caller goes on.
    bool await_ready() const noexcept { return !handle_ || handle_.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
        handle_.promise().continuation = caller;
        return handle_;
    }
    void await_resume() const {
        if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    }

    std::coroutine_handle<promise_type> handle() const { return handle_; }
    bool done() const { return !handle_ || handle_.done(); }
    void rethrow_if_failed() const {
        if (handle_ && handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    }

private:
    void destroy() {
        if (handle_) handle_.destroy();
        handle_ = {};
    }
    std::coroutine_handle<promise_type> handle_;
};

}  // namespace tandem
