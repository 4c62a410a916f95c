#include "host/run/run_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

namespace tandem::host {

namespace {

// 1234567 -> "1,234,567".
std::string with_thousands(std::uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// Simulated microseconds as a reader takes them: "850.0 us", "12.80 ms".
std::string sim_time(double us) {
    return us < 1000 ? fmt::format("{:.1f} us", us) : fmt::format("{:.2f} ms", us / 1000);
}

int view_number(kernels::ViewKind v) { return static_cast<int>(v) + 1; }

}  // namespace

ProgressSink stderr_progress_sink() {
    ProgressSink s;
    s.out = &std::cerr;
    s.tty = ::isatty(STDERR_FILENO) != 0;
    if (s.tty) {
        s.first = std::chrono::milliseconds(2000);
        s.every = std::chrono::milliseconds(1000);
    }
    return s;
}

std::string format_progress(const ProgressSnapshot& s) {
    const std::string head = fmt::format("[progress] {:.0f} s: ", s.host_s);
    if (!s.started) return head + "setting up the machine";
    const int views = view_number(kernels::ViewKind::Pipelined);
    return fmt::format("{}{} view ({} of {}){}, {} simulated in it ({} in all), {} windows", head,
                       kernels::view_name(s.view), view_number(s.view), views, s.warm_up ? ", warm-up runs" : "",
                       sim_time(s.simulated_in_view_us), sim_time(s.simulated_us), with_thousands(s.windows));
}

ProgressReporter::ProgressReporter(const ProgressSink& sink, const Coordinator& coordinator)
    : sink_(sink), coordinator_(coordinator) {
    if (sink_.out != nullptr) thread_ = std::thread([this] { loop(); });
}

ProgressReporter::~ProgressReporter() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    // A terminal's line is cleared: the run's summary follows on stdout.
    if (sink_.tty && line_width_ > 0) {
        *sink_.out << '\r' << std::string(line_width_, ' ') << '\r';
        sink_.out->flush();
    }
}

void ProgressReporter::enter(kernels::ViewKind view, bool warm_up, SimTime start) {
    std::lock_guard lock(mu_);
    started_ = true;
    view_ = view;
    warm_up_ = warm_up;
    view_start_ = start;
}

ProgressSnapshot ProgressReporter::snapshot() const {
    ProgressSnapshot s;
    s.host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
    const SimTime now = coordinator_.window_end();
    s.windows = coordinator_.windows();
    std::lock_guard lock(mu_);
    s.started = started_;
    s.view = view_;
    s.warm_up = warm_up_;
    s.simulated_in_view_us = to_us(std::max<SimTime>(0, now - view_start_));
    s.simulated_us = to_us(now);
    return s;
}

void ProgressReporter::print(const std::string& line) {
    if (sink_.tty) {
        *sink_.out << '\r' << line << std::string(line_width_ > line.size() ? line_width_ - line.size() : 0, ' ');
        line_width_ = std::max(line_width_, line.size());
    } else {
        *sink_.out << line << '\n';
    }
    sink_.out->flush();
}

void ProgressReporter::loop() {
    auto next = began_ + sink_.first;
    for (;;) {
        {
            std::unique_lock lock(mu_);
            if (cv_.wait_until(lock, next, [this] { return stopping_; })) return;
        }
        print(format_progress(snapshot()));
        next += sink_.every;
    }
}

}  // namespace tandem::host
