#pragma once
// Splits [0, count) into contiguous bands, one per host thread the caller may use (`threads`;
// 0: every host core; fewer when the range is small), and runs `fn(begin, end)` on each band
// concurrently; the calling thread takes the first band. A run passes its share of the host
// (RunOutputs::host_threads: a sweep's rows share the host's cores).
// For host-side work on independent elements (input generation, the golden, verification):
// callers must make their result independent of where the bands are cut, so that it stays the
// same whatever the machine's core count.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "sim/host_threads.hpp"

namespace tandem::host {

// Bands of at least this many elements (or rows x columns) are worth a thread: the host-side
// work's common band size (input generation, the golden, verification).
inline constexpr std::int64_t kMinBandElements = 1 << 20;

template <class Fn>
void for_each_band(std::int64_t count, std::int64_t min_band, int threads, Fn&& fn) {
    const std::int64_t cores = threads > 0 ? std::min<std::int64_t>(threads, host_core_count()) : host_core_count();
    const std::int64_t bands = std::clamp<std::int64_t>(count / std::max<std::int64_t>(1, min_band), 1, cores);
    const std::int64_t band = (count + bands - 1) / bands;
    std::vector<std::thread> workers;
    for (std::int64_t b = 1; b < bands && b * band < count; ++b)
        workers.emplace_back([&fn, b, band, count] { fn(b * band, std::min(count, (b + 1) * band)); });
    fn(std::int64_t{0}, std::min(count, band));
    for (auto& w : workers) w.join();
}

}  // namespace tandem::host
