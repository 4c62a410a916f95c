#pragma once
// Host-side measurements shared by the benchmark programs: wall and process CPU clocks, peak
// resident memory, host core count.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

#include "sim/host_threads.hpp"

namespace tandem::bench {

inline double wall_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU time of the whole process (every thread), in seconds.
inline double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Peak resident set of this process so far, in KiB (Linux).
inline long peak_rss_kib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

// Returns once the process's CPU clock stands still (less than 0.5 ms of CPU in 10 ms of wall),
// or after `max_seconds`: so that work left running by what came before (OpenBLAS's pool
// threads spin for about 0.1 s after a multithreaded call) is not charged to what comes next.
inline void wait_until_process_idle(double max_seconds = 1.0) {
    const double give_up = wall_now() + max_seconds;
    double cpu = cpu_now();
    while (wall_now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const double now = cpu_now();
        if (now - cpu < 0.5e-3) return;
        cpu = now;
    }
}

inline int host_cores() { return host_core_count(); }

}  // namespace tandem::bench
