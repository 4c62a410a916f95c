// The host program, as the seeds' main.cpp: parse the run, resolve it into an op (the ops
// facade), bring up the comm world on the simulated cluster, run the op's three views, verify,
// print the summary, write the outputs. With no --op it runs the registry's first op (the seed's
// AllGather+GEMM). Every error ends here with one message in the command line's words and a
// non-zero exit.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "host/run/blas_threads.hpp"
#include "host/run/cluster_shape.hpp"
#include "host/batch/mpi_launch.hpp"
#include "host/cli/list_ops_json.hpp"
#include "host/cli/options.hpp"
#include "host/cli/results_diff.hpp"
#include "host/params/param_values.hpp"
#include "host/run/program.hpp"
#include "host/batch/sweep_command.hpp"
#include "host/batch/sweep_mpi.hpp"
#include "host/batch/tune.hpp"
#include "sim/sim_error.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;

// Ctrl-C during --sweep/--tune. A signal handler may only touch lock-free atomics (async-signal-
// safe), so it just counts; the sweep's pool polls the count (first: start no new rows, second:
// abandon the running ones), saves the finished rows and main exits 130. Plain runs keep the
// default SIGINT: their outputs are written atomically at the end, so nothing is half-written.
std::atomic<int> g_interrupts{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void count_interrupt(int) { g_interrupts.fetch_add(1, std::memory_order_relaxed); }

int run_batch(const CommandLine& cl) {
    struct sigaction sa {};
    sa.sa_handler = count_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    // Under mpirun a sweep spreads its rows over the processes (sweep_peers.hpp); destroyed at
    // the end of this scope (MPI_Finalize), after the results are written.
    const std::unique_ptr<SweepPeers> peers = join_mpi_sweep();
    const CommandOutcome outcome =
        cl.batch.tune ? run_tune_command(cl.run, cl.batch, std::cout, std::cerr, &g_interrupts, tty, peers.get())
                      : run_sweep_command(cl.run, cl.batch, std::cout, std::cerr, &g_interrupts, tty, peers.get());
    if (outcome.abandoned_runs) {
        // Abandoned runs still simulate on detached threads: end without running destructors
        // under them. The finished rows are saved already.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        std::_Exit(outcome.exit_code);
    }
    return outcome.exit_code;
}

// The profile; a SoC's errors name the flag that named it (a file's name the file already).
Profile load_run_profile(const RunRequest& r) {
    if (!r.profile_file.empty()) return load_profile(r.profile_file);
    try {
        return load_profile_by_soc(r.soc, default_profile_dir());
    } catch (const SimError& e) {
        throw SimError(fmt::format("-v {}: {}", r.soc, e.what()));
    }
}

// "[INFO] Tandem: ..." before a run: the seed's name of its run, or the op's configuration.
std::string run_label(const ResolvedRun& run) {
    const RunRequest& r = run.request;
    if (run.op->seed_format) return run.op->seed_format->run_label;
    return fmt::format("{} ({} variant, {} schedule, {} -> {}, bias {})", r.op, r.variant, r.schedule,
                       dtype_name(r.dtype), dtype_name(run.params.out_dtype), kernels::bias_name(r.bias));
}

int run(int argc, char** argv) {
    // `tandem diff A.json B.json`: two results compared, no simulation (results_diff.hpp).
    if (argc >= 2 && std::string_view(argv[1]) == "diff") {
        return run_diff_command(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
    }
    const CommandLine cl = parse_command_line(argc, argv);
    if (cl.list_ops) {
        if (cl.json_file.empty()) fmt::print("{}", list_ops_text());
        else write_json_atomic(cl.json_file, list_ops_json());  // for scripts: --json /dev/stdout prints it
        return 0;
    }
    // Started P times by mpirun, anything but a sweep would run P times over the same files.
    if (const int launched = mpi_launch_size_from_env(); launched > 1 && !cl.batch.any()) {
        throw SimError(fmt::format("started by mpirun with {} processes: only --sweep and --tune spread over "
                                   "processes; run a single configuration without mpirun",
                                   launched));
    }
    if (cl.batch.any()) return run_batch(cl);
    const Profile profile = load_run_profile(cl.run);
    const ResolvedRun run = resolve_run(cl.run, profile);
    check_program_options(cl, run);
    const RunRequest& r = run.request;
    if (!cl.quiet) {
        fmt::print("[INFO] Tandem: {} on {} x {} ({} mode), M={} K={} N={}, base {}x{}, blocks {}/{} "
                   "(compute/comm), comm mode {}\n",
                   run_label(run), r.ranks, profile.name, data_mode_name(r.timing_only), r.m, r.k, r.n, r.base_m,
                   r.base_n, *r.compute_blocks, *r.comm_blocks, r.comm_mode);
        fmt::print("[INFO] Cluster: {}\n", describe_cluster(profile.interconnect, r.ranks));
        if (r.warmup_runs > 0) {
            fmt::print("[INFO] Running compute-only, sequential and pipelined views, each after {} warm-up run{}...\n",
                       r.warmup_runs, r.warmup_runs == 1 ? "" : "s");
        } else {
            fmt::print("[INFO] Running compute-only, sequential and pipelined views...\n");
        }
        std::fflush(stdout);
    }
    RunOutputs outputs = cl.outputs;
    if (!cl.quiet) outputs.progress = stderr_progress_sink();  // a long run says how far it has got
    const ProgramOutput out = run_program(run, profile, outputs);
    if (!cl.quiet) {
        switch (out.results.verification) {
            case Verification::Passed: fmt::print("[INFO] Functional run completed. Verification PASSED.\n"); break;
            case Verification::Failed: fmt::print("[ERROR] Verification FAILED.\n{}", out.failure_report); break;
            case Verification::Skipped: fmt::print("[INFO] Timing-only run: no data, verification skipped.\n"); break;
        }
    }
    // The summary first (--quiet keeps it, and errors), then the files, smallest first: a file
    // that cannot be written after all (a full disk) loses neither the summary nor the others.
    fmt::print("{}", format_summary(out.results));
    std::fflush(stdout);
    if (!cl.json_file.empty()) write_json_atomic(cl.json_file, to_json(out.results));
    write_program_files(run, cl.outputs, out);
    if (!cl.outputs.trace_file.empty()) {
        const TraceWritten t = write_trace(cl.outputs, profile, out);
        fmt::print("  {:<29}{}\n", "Trace:", describe_trace(cl.outputs.trace_file, t, r.ranks));
    }
    if (!cl.quiet) {
        fmt::print("[INFO] simulated {} instructions in {:.2f} s of host time\n", out.bench.instructions, out.wall_seconds);
        if (!r.timing_only) fmt::print("[INFO] outputs: {}/output_rank<r>.bin\n", cl.outputs.out_dir);
    }
    if (r.sanitize) {
        if (out.bench.sanitizer_total > 0) {
            std::cerr << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
            return kSanitizerExitCode;
        }
        if (!cl.quiet) fmt::print("[SANITIZE] clean: no violation found\n");
    }
    return out.results.verification == Verification::Failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    // The simulated streams already run on host threads; a threaded BLAS under each of them
    // would only oversubscribe the cores (and its idle pool would spin: host/run/blas_threads.hpp).
    tandem::host::use_single_threaded_blas();
    try {
        return run(argc, argv);
    } catch (const CLI::Error& e) {
        return report_cli_error(e, std::cout, std::cerr, argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "tandem");
    } catch (const tandem::SanitizerFailure& e) {
        std::cerr << e.what();
        return tandem::host::kSanitizerExitCode;
    } catch (const tandem::SimError& e) {
        std::cerr << "[ERROR] " << tandem::host::cli_message(e) << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "[ERROR] internal error: " << e.what() << "\n";
        return 3;
    }
}
