// `--sweep FILE` as the host program runs it. See sweep_command.hpp.
#include "host/batch/sweep_command.hpp"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "host/batch/profile_cache.hpp"
#include "host/batch/sweep_outputs.hpp"
#include "host/batch/sweep_plan.hpp"
#include "host/batch/sweep_wire.hpp"
#include "sim/sim_error.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
SweepOptions sweep_options_for(const BatchOptions& batch, const std::string& prefix, const char* label,
                               std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty) {
    prepare_sweep_out(prefix);
    SweepOptions opt;
    opt.jobs = effective_jobs(batch.jobs);
    opt.out_prefix = prefix;
    opt.label = label;
    opt.progress = batch.quiet ? nullptr : &err;
    opt.messages = &err;
    opt.progress_tty = err_is_tty;
    opt.interrupts = interrupts;
    return opt;
}

namespace {

// Another rank of a sweep over MPI: plan what rank 0 broadcast, run the rows it hands out.
CommandOutcome run_sweep_rows_for_rank0(const RunRequest& defaults, const BatchOptions& batch, std::ostream& err,
                                        SweepPeers& peers) {
    const SweepStart start = decode_sweep_start(peers.broadcast(std::string()));
    if (!start.ok) return CommandOutcome{2, false};  // rank 0 reports why
    try {
        ProfileCache profiles;
        profiles.of(defaults);
        const SweepPlan plan = plan_sweep_text(start.text, batch.sweep_file, defaults, profiles);
        if (job_lines(plan) != start.lines) {
            std::string why = "the rows that are good differ";
            if (!plan.bad.empty()) why = plan.bad.front().message;
            fail(fmt::format("the sweep plans differently here than on rank 0 (a profile file missing on this host?): {}",
                             why));
        }
        SweepOptions opt;
        opt.jobs = effective_jobs(batch.jobs);
        opt.label = "sweep";
        opt.peers = &peers;
        SweepRunner runner(opt);
        runner.run(plan.jobs);
    } catch (const std::exception& e) {
        err << fmt::format("[ERROR] sweep over MPI, rank {} of {}: {}\n", peers.rank(), peers.size(), e.what());
        err.flush();
        peers.abort(2);
    }
    return CommandOutcome{};
}

}  // namespace

CommandOutcome run_sweep_command(const RunRequest& defaults, const BatchOptions& batch, std::ostream& out,
                                 std::ostream& err, const std::atomic<int>* interrupts, bool err_is_tty,
                                 SweepPeers* peers) {
    if (peers != nullptr && peers->size() <= 1) peers = nullptr;
    if (peers != nullptr && peers->rank() != 0) return run_sweep_rows_for_rank0(defaults, batch, err, *peers);
    ProfileCache profiles;
    SweepPlan plan;
    std::string text;
    const std::string prefix = batch.out_prefix.empty() ? std::string("out/sweep") : batch.out_prefix;
    try {
        profiles.of(defaults);  // a bad -v/--profile is a command-line error, not one bad row per row
        text = read_sweep_file(batch.sweep_file);
        plan = plan_sweep_text(text, batch.sweep_file, defaults, profiles);
        // Over MPI, everything that can refuse the sweep happens before the others start.
        if (peers != nullptr) prepare_sweep_out(prefix);
    } catch (...) {
        if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{}));  // the others end quietly
        throw;
    }
    if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{true, text, job_lines(plan)}));
    for (const SweepRowError& b : plan.bad) err << b.message << '\n';
    if (peers != nullptr && !batch.quiet) {
        err << fmt::format("sweep: {} rows over {} MPI processes (rank 0 hands them out and writes the results)\n",
                           plan.jobs.size(), peers->size());
    }
    err.flush();
    SweepOptions options = sweep_options_for(batch, prefix, "sweep", err, interrupts, err_is_tty);
    options.peers = peers;
    SweepRunner runner(options);
    runner.set_bad_rows(static_cast<int>(plan.bad.size()));
    runner.set_expected_total(plan.rows());
    try {
        runner.run(plan.jobs);
    } catch (const std::exception& e) {
        if (peers == nullptr) throw;
        // The other ranks wait for rows: end the job rather than leave them waiting.
        runner.finish_progress();
        err << fmt::format("[ERROR] sweep over MPI, rank 0 of {}: {}\n", peers->size(), e.what());
        err.flush();
        peers->abort(2);
    }
    runner.finish_progress();

    const std::vector<SweepEntry> entries = runner.entries();
    const int ran = static_cast<int>(std::count_if(entries.begin(), entries.end(),
                                                   [](const SweepEntry& e) { return e.has_results; }));
    if (!batch.quiet && ran > 0) out << format_sweep_table(entries);
    CommandOutcome outcome;
    if (runner.interrupted()) {
        err << fmt::format("sweep: interrupted: {} of {} rows saved in {}.csv and {}.json{}\n", ran, plan.rows(), prefix,
                           prefix,
                           runner.abandoned() > 0 ? fmt::format(" ({} running rows abandoned)", runner.abandoned())
                                                  : std::string());
        outcome.exit_code = 130;
        outcome.abandoned_runs = runner.abandoned() > 0;
        return outcome;
    }
    const std::string over = peers == nullptr ? std::string()
                                              : fmt::format(" over {} MPI processes (rows by rank: {})", peers->size(),
                                                            fmt::join(runner.rows_per_process(), " "));
    out << fmt::format("sweep: {} of {} rows ran ({} bad, {} failed) in {:.1f} s{}; results: {}.csv, {}.json\n", ran,
                       plan.rows(), plan.bad.size(), runner.failed(), runner.elapsed_seconds(), over, prefix, prefix);
    outcome.exit_code = plan.bad.empty() && runner.failed() == 0 ? 0 : 1;
    return outcome;
}

}  // namespace tandem::host
