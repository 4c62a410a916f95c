#pragma once
// The pool that runs many configurations at once (the rows of `--sweep`, the configurations of
// `--tune`): host threads each running whole configurations, the progress line, the output files
// (PREFIX.csv and PREFIX.json, written after every completed row, so an interrupted sweep keeps
// what it finished), Ctrl-C, and the hand-out of rows to other processes under MPI.
//
//   SweepRunner runner(options);
//   runner.run(plan.jobs);            // runner.entries(): results
//
// Results are a pure function of the jobs: the pool's size and the completion order change
// nothing in the output files (tested).
#include <atomic>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/batch/sweep_entry.hpp"
#include "host/batch/sweep_peers.hpp"

namespace tandem::host {

struct SweepOptions {
    int jobs = 0;                     // configurations at once; 0: one per host core (sim/host_threads.hpp)
    std::string out_prefix;           // PREFIX.csv / PREFIX.json; empty: no files
    std::string label = "sweep";      // the progress line's first word
    std::ostream* progress = nullptr; // the progress line; nullptr: none
    std::ostream* messages = nullptr; // one line per failed run ("<origin>: <what>"); nullptr: none
    bool progress_tty = false;        // `\r`-updated progress line (else one line per completed row)
    const std::atomic<int>* interrupts = nullptr;  // SIGINT count: >= 1 stop starting rows, >= 2 abandon running ones
    double interrupt_grace_s = 3.0;   // after the first interrupt, how long running rows may take
    // A sweep spread over processes (sweep_peers.hpp): on rank 0 the runner also hands rows out
    // to the other ranks and gathers their results into entries(); on the others it runs only
    // the rows rank 0 gives it (every process passes the same jobs to each run()). A runner may
    // run() several batches if every process starts the next only after the last one ended on
    // every process (--tune's stages meet at a broadcast between them).
    // nullptr or one process: this process runs every row.
    SweepPeers* peers = nullptr;
};

// Runs jobs on a pool of host threads. Each run() appends its jobs to entries(); the output
// files always hold every entry so far (those with results), in the order added.
class SweepRunner {
public:
    explicit SweepRunner(SweepOptions options);
    ~SweepRunner();
    SweepRunner(const SweepRunner&) = delete;
    SweepRunner& operator=(const SweepRunner&) = delete;

    // For the progress line: rows known bad (counted as done) and the total rows expected over
    // all run() calls (0: the jobs run so far).
    void set_bad_rows(int bad);
    void set_expected_total(int total);

    // Runs `jobs`; returns when all are done, or when interrupted (see SweepOptions). Throws
    // tandem::SimError if an output file cannot be written.
    void run(std::vector<SweepJob> jobs);

    // A snapshot of the entries (pending ones were never started or were abandoned).
    std::vector<SweepEntry> entries() const;
    bool interrupted() const;
    int abandoned() const;  // runs still going when the runner gave up on them
    int failed() const;     // runs that threw or failed verification
    // Over processes (SweepOptions::peers, rank 0): the rows each process ran, by rank.
    std::vector<int> rows_per_process() const;
    double elapsed_seconds() const;

    // Ends the progress line (a newline on a terminal). Called by the destructor too.
    void finish_progress();

    struct State;  // the pool's shared state (sweep_runner.cpp)

private:
    std::shared_ptr<State> state_;  // shared with the workers (abandoned ones outlive run())
};

// Configurations at once: `jobs`, or the host's core count.
int effective_jobs(const std::optional<int>& jobs);

}  // namespace tandem::host
