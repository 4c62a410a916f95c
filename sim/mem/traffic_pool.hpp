#pragma once
// MemTraffic records, recycled. A stream fills one record per chip it touched in each window and
// hands it to that chip at the barrier; the chip applies it in the next window, on whichever
// host thread gets there first, and lets go of it. Made afresh every window, a record's vectors
// grew from nothing every time and were freed on another thread: on a 64-rank mesh that was a few
// percent of the run spent in the allocator. Here a record that is let go comes back to the pool
// of the stream that filled it, emptied, its vectors keeping their capacity.
#include <memory>
#include <mutex>
#include <vector>

#include "sim/mem/chip_memory.hpp"

namespace tandem {

class TrafficPool : public std::enable_shared_from_this<TrafficPool> {
public:
    // Made only as a shared_ptr: every record taken keeps its pool alive until it comes back.
    static std::shared_ptr<TrafficPool> make() { return std::shared_ptr<TrafficPool>(new TrafficPool()); }

    // An empty record. When its last holder lets go (on any thread) it comes back here.
    std::shared_ptr<MemTraffic> take();
    // Frees the records kept, and those that come back from now on until the next take(): a
    // stream between kernels (an op's other views run on other streams) holds none.
    void release_kept();

private:
    TrafficPool() { free_.reserve(kMaxKept); }  // give_back() runs in a deleter: it must not allocate
    void give_back(MemTraffic* traffic);

    // Records kept for reuse at most (a stream has one per chip it touched in flight per window,
    // and a chip applies a window's records in the next one: a few windows' worth).
    static constexpr std::size_t kMaxKept = 256;
    std::mutex mu_;  // the stream takes at its barriers; records come back from any thread
    std::vector<std::unique_ptr<MemTraffic>> free_;
    bool keeping_ = true;  // false from release_kept() to the next take()
};

}  // namespace tandem
