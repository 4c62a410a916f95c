#pragma once
// The kernel sanitizer (--sanitize): happens-before checking of every GM access of a run.
//
// Each block part (and each rank's host) is a thread with a vector clock. Edges: program order;
// a TNOTIFY releases the block's clock on the signal word and a TWAIT/TTEST that observed the
// word acquires every release visible there by then; CrossCoreSetFlag -> CrossCoreWaitFlag;
// kernel boundaries on one stream; launch (host -> kernel), synchronize (kernel -> host), the
// host barrier, host signal writes. A GM write counts as done, for the releases that follow
// it, only once the scalar has waited for its pipe (pipe_barrier, wait_flag to PIPE_S, TPUT's
// wait, the block's end), as the pipe model defines completion: a TNOTIFY raised while the
// write is still in flight does not publish it.
//
// Logical processes record their accesses as they run and hand them in when their kernel ends;
// check() replays those handed in since the last check in simulated time order (ties by thread and sequence: a total
// order independent of host timing) over shadow cells of 32 bytes, each holding its last write
// and the reads and atomic adds since (and, after a write of part of the cell, the earlier
// accesses of the bytes it left). Two accesses to a cell conflict when they share a byte and at
// least one writes (atomic adds do not conflict with each other); a conflicting pair in which
// neither happens before the other is a violation, whatever bytes this run's timing delivered.
//
// Stale flags are checked as the run goes (StreamSanitizer::check_wait): each signal write
// carries a stamp (signal_stamp.hpp) naming its writer and host call.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/sanitize/vector_clock.hpp"
#include "sim/sim_error.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct GmAllocation;
class GlobalMemory;

// One GM access (a tile's rows) by one thread.
struct SanAccess {
    enum class Kind : std::uint8_t { Read, Write, Atomic };
    SimTime time = 0;  // when it takes effect: a read at its start, a write when visible
    ThreadKey thread = 0;
    std::uint64_t seq = 0;  // per thread
    Kind kind = Kind::Read;
    const GmAllocation* alloc = nullptr;
    std::int64_t offset = 0;  // bytes into the allocation
    int rows = 0;
    std::int64_t row_bytes = 0;
    std::int64_t ld_bytes = 0;
    std::uint32_t issue_clock = 0;  // the thread's clock at issue
    std::uint32_t epoch = 0;        // writes: the clock at which the scalar had waited for it
    std::shared_ptr<const VectorClock> vc;  // what the thread knew at issue
    std::string where;  // "rank 1, stream 'comm', kernel 'k', block 3, TSTORE at 1.234 us"
};

// A release (TNOTIFY, CrossCoreSetFlag) a thread made at `clock`, for naming it in a report.
struct SanRelease {
    ThreadKey thread = 0;
    std::uint32_t clock = 0;
    std::string where;
};

// One finding, in the report's format: "[class] what\n  where ...".
struct SanViolation {
    std::string cls;   // "unsynchronised read", "flag before data", ...
    std::string text;  // the whole report entry
};

// The report's class names.
inline constexpr const char* kClassUnsyncRead = "unsynchronised read";
inline constexpr const char* kClassFlagBeforeData = "flag before data";
inline constexpr const char* kClassStaleFlag = "stale flag";
inline constexpr const char* kClassUnschedulable = "unschedulable spinners";
inline constexpr const char* kClassDisagreeingRanks = "disagreeing ranks";
inline constexpr const char* kClassBounds = "out of bounds / overflow";

class Sanitizer {
public:
    // `memories`: every rank's GM, in rank order; check() compares their shared windows.
    explicit Sanitizer(std::vector<const GlobalMemory*> memories) : memories_(std::move(memories)) {}

    // Reports beyond this many are counted, not kept.
    static constexpr std::size_t kMaxReports = 20;

    // Thread-safe: logical processes and hosts hand in what they recorded.
    void add_accesses(std::vector<SanAccess>&& a, std::vector<SanRelease>&& r);
    void add_access(SanAccess a);
    // A violation found while running (stale flag, disagreeing ranks, a run error).
    void add_violation(SanViolation v);
    // Rank `rank` launched kernel `kernel` as launch `index` (from 0) of its stream `stream` with
    // `signature`: the ranks' launches at one (stream, index) must agree (class 5).
    void note_launch_signature(const std::string& stream, std::size_t index, int rank, const std::string& kernel,
                               const std::string& signature);

    // Replays the accesses handed in since the last check and returns the violations found since
    // (the first kMaxReports), run-time ones first, each list in a stable order; total_violations()
    // counts them all. Call it only where everything recorded so far happens before everything
    // that runs next (the end of a run; in an API session, when no call is pending: every stream
    // synchronised, then a host barrier): the replay starts from fresh shadow cells each time.
    // What later calls need of earlier ones (the clocks, the stamps stale flags are judged by) is
    // kept by the streams and hosts, not here.
    std::vector<SanViolation> check();
    std::size_t total_violations() const { return total_; }

private:
    // Class 5: a shared (window) allocation whose size differs between ranks.
    void check_windows_locked();

    std::vector<const GlobalMemory*> memories_;
    std::mutex mu_;
    struct SignedLaunch {
        int rank;
        std::string kernel;
        std::string signature;
    };
    std::map<std::pair<std::string, std::size_t>, SignedLaunch> signed_launches_;  // the first rank's
    std::vector<std::vector<SanAccess>> batches_;
    std::vector<SanRelease> releases_;
    std::vector<SanViolation> runtime_;
    std::set<std::tuple<std::string, int, int>> windows_reported_;  // (name, n-th of it, rank)
    std::size_t total_ = 0;
};

// A run error (SimError) as a violation: out-of-bounds accesses and overflows, blocks that can
// never be scheduled, or any other error (class "run error").
SanViolation classify_run_error(const std::string& message);

// Thrown by a --sanitize run that failed with an error: the report, in the sanitizer's format.
class SanitizerFailure : public SimError {
public:
    explicit SanitizerFailure(const std::string& report) : SimError(report) {}
};

// The report as printed: a headline with the count, then each violation.
std::string format_sanitizer_report(const std::vector<SanViolation>& v, std::size_t total);

}  // namespace tandem
