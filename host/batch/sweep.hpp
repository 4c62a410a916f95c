#pragma once
// Many AllGather+GEMM runs at once (`--sweep FILE`, and the runs of `--tune`): the rows of a CSV
// or JSON file become RunConfigs, a pool of host threads runs whole configurations, and the
// results (docs/RESULTS.md result objects in input order) are written as PREFIX.csv and PREFIX.json
// after every completed row, so an interrupted sweep keeps what it finished.
//
//   ProfileCache profiles;
//   SweepPlan plan = plan_sweep("rows.csv", cli_config, profiles);  // bad rows: plan.bad
//   SweepRunner runner(options);
//   runner.run(plan.jobs);                                          // runner.entries(): results
//
// Results are a pure function of the rows: the pool's size and the completion order change
// nothing in the output files (tested).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/run/results.hpp"
#include "host/cli/command_line.hpp"
#include "host/batch/sweep_peers.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// Profiles by what a row names: a SoC (`Ascend910B3`, looked up in the profile directory) or a
// TOML file. Each is loaded once. Not thread-safe: used while planning, before the pool starts.
class ProfileCache {
public:
    // Throws tandem::SimError (unknown SoC, missing or malformed file).
    std::shared_ptr<const Profile> by_soc(const std::string& soc);
    std::shared_ptr<const Profile> by_file(const std::filesystem::path& file);
    // The profile a config names (cfg.profile_file if set, else cfg.soc).
    std::shared_ptr<const Profile> of(const RunConfig& cfg);

private:
    std::map<std::string, std::shared_ptr<const Profile>> by_soc_;
    std::map<std::string, std::shared_ptr<const Profile>> by_file_;
};

// One configuration to run: validated, block counts resolved.
struct SweepJob {
    int line = 0;          // the row's line in the sweep file (tune: the config's number, from 1)
    std::string origin;    // for messages: "sweep FILE line N" / "tune config N"
    RunConfig cfg;
    std::shared_ptr<const Profile> profile;
};

struct SweepRowError {
    int line = 0;
    std::string message;   // the whole line: "sweep FILE line N: <what>"
};

struct SweepPlan {
    std::vector<SweepJob> jobs;       // the good rows, in input order
    std::vector<SweepRowError> bad;   // the bad rows, in input order
    int rows() const { return static_cast<int>(jobs.size() + bad.size()); }
};

// The columns (CSV header names, JSON keys) a sweep row may have. Names are case-insensitive
// and '-' is read as '_' (so `base-m` is `base_m`).
const std::vector<std::string>& sweep_columns();

// Reads a sweep file: JSON when it ends in .json or its first non-blank character is '[',
// CSV otherwise. Each row starts from `defaults` (the command line: -v/--profile, tile, blocks,
// chunk tiles, comm mode apply to rows that do not set them) and is timing-only unless its
// `timing_only` says false. Throws tandem::SimError for a file that cannot be used at all
// (missing, not CSV/JSON, a header with an unknown or repeated column, no rows).
SweepPlan plan_sweep(const std::filesystem::path& file, const RunConfig& defaults, ProfileCache& profiles);

// A sweep file's bytes. Throws tandem::SimError if it is missing or unreadable.
std::string read_sweep_file(const std::filesystem::path& file);

// Same, from text (`name` is used in messages and to resolve relative profile paths).
SweepPlan plan_sweep_text(const std::string& text, const std::filesystem::path& name, const RunConfig& defaults,
                          ProfileCache& profiles);

enum class SweepStatus { Pending, Ok, Failed };

// The outcome of one job.
struct SweepEntry {
    SweepJob job;
    SweepStatus status = SweepStatus::Pending;
    RunResults results;     // when Ok or Failed after running (verification failed)
    bool has_results = false;
    std::string error;      // when Failed
};

// The result object (docs/RESULTS.md) of an entry with results (with the op's keys and the variant's
// knobs as used), plus `sweep_line`.
nlohmann::json sweep_result_json(const SweepEntry& e);

// The output files' contents: every entry with results, in the order given.
// CSV columns: the contract keys in docs/RESULTS.md order, then sweep_line, then op, variant, schedule,
// dtype, out_dtype, bias, comm_kind, then the knobs any entry reports (chunk_tiles, ...).
std::string sweep_csv(const std::vector<SweepEntry>& entries);
nlohmann::json sweep_json(const std::vector<SweepEntry>& entries);

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

    struct State;  // the pool's shared state (sweep.cpp)

private:
    std::shared_ptr<State> state_;  // shared with the workers (abandoned ones outlive run())
};

// What a command tells main: the exit code, and whether runs were abandoned (their threads are
// still going: main must end the process without waiting for them, std::_Exit).
struct CommandOutcome {
    int exit_code = 0;
    bool abandoned_runs = false;
};

// `--sweep FILE` as the host program runs it: plan, report bad rows (one line each on `err`),
// run with the progress line on `err`, write cli.sweep_out + .csv/.json, print the table on
// `out` (unless --quiet). Exit code: 0 if every row ran and passed, 1 if any row was bad or
// failed, 130 if interrupted. Throws tandem::SimError for a file that cannot be used at all.
// With `peers` of more than one process (mpirun), the rows are spread over them: rank 0 does all
// of the above with every process's rows; the others run rows and print nothing (exit code 0,
// or 2 when rank 0 could not plan the file; a fatal error of their own ends the job).
CommandOutcome run_sweep_command(const RunConfig& cli, std::ostream& out, std::ostream& err,
                                 const std::atomic<int>* interrupts, bool err_is_tty, SweepPeers* peers = nullptr);

// The end-of-sweep table: line, ranks, m, k, n, pipelined us, TFLOPS, overlap %.
std::string format_sweep_table(const std::vector<SweepEntry>& entries);

// Creates PREFIX's directory if missing; throws tandem::SimError naming it if that fails.
void prepare_sweep_out(const std::string& prefix);

int effective_jobs(const std::optional<int>& jobs);

// The command-line side of a sweep or tune: output directory made, worker pool, progress and
// messages to `err`, labelled `label` ("sweep" or "tune").
SweepOptions sweep_options_for(const RunConfig& cli, const std::string& prefix, const char* label, std::ostream& err,
                               const std::atomic<int>* interrupts, bool err_is_tty);

}  // namespace tandem::host
