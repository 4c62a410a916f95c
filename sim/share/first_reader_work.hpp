#pragma once
// Work a window barrier leaves to the next window's first reader of a shared resource
// (sim/share/sharing_quanta.hpp says how resources are shared). The barrier runs on one host
// thread while the others wait, so it only marks the work pending; whichever stream reads the
// resource first in the next window does it, under the resource's lock, and the others find it
// done. No stream of the resource has read or moved since the barrier, so the work sees what the
// barrier would have seen, whichever host thread gets there first: the result does not depend
// on the threads. A link's hub bins its first stream's records this way (sim/net/link_hub.hpp),
// a chip's memory applies the deliveries its barriers queued (sim/mem/chip_memory.hpp).
#include <atomic>
#include <mutex>

namespace tandem {

class FirstReaderWork {
public:
    explicit FirstReaderWork(bool pending = false) : pending_(pending) {}
    FirstReaderWork(const FirstReaderWork&) = delete;
    FirstReaderWork& operator=(const FirstReaderWork&) = delete;

    // At a barrier (single-threaded): the next reader has work to do.
    void mark_pending() { pending_.store(true, std::memory_order_release); }
    // Whether the work is still to do.
    bool pending() const { return pending_.load(std::memory_order_acquire); }
    // From any thread in a window: does `work` if it is pending (one thread does it; the others
    // return once it is done).
    template <typename F>
    void run_if_pending(F&& work) {
        if (!pending_.load(std::memory_order_acquire)) return;  // the usual case once a window has begun
        std::lock_guard lock(mu_);
        if (!pending_.load(std::memory_order_relaxed)) return;  // another reader did it meanwhile
        work();
        pending_.store(false, std::memory_order_release);
    }

private:
    std::atomic<bool> pending_;
    std::mutex mu_;
};

}  // namespace tandem
