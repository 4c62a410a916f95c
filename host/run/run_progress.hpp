#pragma once
// What a long run says while it runs: which view it is in and how far it has simulated, every so
// often on the host's clock (a 384-rank run takes minutes). Read from another thread, it never
// touches the simulation: results and traces do not depend on it, only the lines it prints do on
// the host's speed. The command line prints it on stderr unless --quiet; sweeps print their own.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "kernels/op_desc.hpp"
#include "sim/exec/coordinator.hpp"
#include "sim/sim_time.hpp"

namespace tandem::host {

// Where and how often a run reports its progress.
struct ProgressSink {
    std::ostream* out = nullptr;  // null: no reports
    bool tty = false;             // a terminal: one line redrawn ('\r'), cleared at the end
    std::chrono::milliseconds first{10000};  // the first report after this much host time
    std::chrono::milliseconds every{30000};  // then one every this much
};

// The sink the command line uses on stderr: on a terminal a line redrawn every second from 2 s
// on; in a log a line every 30 s from 10 s on (a run of a few seconds prints nothing).
ProgressSink stderr_progress_sink();

// One report.
struct ProgressSnapshot {
    double host_s = 0;                // host time since the run started
    kernels::ViewKind view = kernels::ViewKind::ComputeOnly;
    bool started = false;             // false: the views have not started (the machine is being set up)
    bool warm_up = false;             // in the view's warm-up runs (--warmup-runs), not its timed run
    double simulated_in_view_us = 0;  // simulated time since rank 0 started the view (or its warm-ups)
    double simulated_us = 0;          // simulated time since the run started
    std::uint64_t windows = 0;        // window barriers so far
};

// "[progress] 42 s: pipelined view (3 of 3), 1.25 ms simulated in it (12.80 ms in all), 4,257 windows"
std::string format_progress(const ProgressSnapshot& s);

class ProgressReporter {
public:
    // Reports on `sink` (nothing when sink.out is null) until destroyed.
    ProgressReporter(const ProgressSink& sink, const Coordinator& coordinator);
    ~ProgressReporter();
    ProgressReporter(const ProgressReporter&) = delete;
    ProgressReporter& operator=(const ProgressReporter&) = delete;

    // Rank 0's host thread: it starts `view` (its warm-ups when `warm_up`) at its clock `start`.
    void enter(kernels::ViewKind view, bool warm_up, SimTime start);

private:
    void loop();
    ProgressSnapshot snapshot() const;
    void print(const std::string& line);

    ProgressSink sink_;
    const Coordinator& coordinator_;
    const std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    // What rank 0 is doing (under mu_).
    bool started_ = false;
    kernels::ViewKind view_ = kernels::ViewKind::ComputeOnly;
    bool warm_up_ = false;
    SimTime view_start_ = 0;
    std::size_t line_width_ = 0;  // a terminal's line drawn so far (0: none)
    std::thread thread_;
};

}  // namespace tandem::host
