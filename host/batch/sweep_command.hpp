#pragma once
// `--sweep FILE` as the host program runs it, and what it shares with `--tune`: the pool's
// options from the command line, and what a command tells main.
#include <atomic>
#include <iosfwd>
#include <string>

#include "host/batch/batch_options.hpp"
#include "host/batch/sweep_peers.hpp"
#include "host/batch/sweep_runner.hpp"
#include "host/params/run_request.hpp"

namespace tandem::host {

// What a command tells main: the exit code, and whether runs were abandoned (their threads are
// still going: main must end the process without waiting for them, std::_Exit).
struct CommandOutcome {
    int exit_code = 0;
    bool abandoned_runs = false;
};

// `--sweep FILE` (batch.sweep_file): plan the rows over `defaults` (the command line's run), report
// bad rows (one line each on `err`), run with the progress line on `err`, write PREFIX.csv/.json
// (batch.out_prefix, default out/sweep), print the table on `out` (unless quiet). Exit code: 0 if
// every row ran and passed, 1 if any row was bad or failed, 130 if interrupted. Throws
// tandem::SimError for a file that cannot be used at all. With `peers` of more than one process
// (mpirun), the rows are spread over them: rank 0 does all of the above with every process's
// rows; the others run rows and print nothing (exit code 0, or 2 when rank 0 could not plan the
// file; a fatal error of their own ends the job).
CommandOutcome run_sweep_command(const RunRequest& defaults, const BatchOptions& batch, std::ostream& out,
                                 std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty,
                                 SweepPeers* peers = nullptr);

// The command line's side of a sweep or tune: output directory made, worker pool, progress and
// messages to `err`, labelled `label` ("sweep" or "tune").
SweepOptions sweep_options_for(const BatchOptions& batch, const std::string& prefix, const char* label,
                               std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty);

}  // namespace tandem::host
