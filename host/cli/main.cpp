// The host program, as the seeds' main.cpp: parse the run, bring up the comm world on the
// simulated cluster, run the op's three views, verify, print the summary, write the outputs.
// With no --op it runs the seed's AllGather+GEMM. Every error ends here with one message and a
// non-zero exit.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "host/run/blas_threads.hpp"
#include "host/batch/mpi_launch.hpp"
#include "host/run/program.hpp"
#include "host/cli/options.hpp"
#include "host/batch/sweep.hpp"
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

int run_batch(const RunConfig& cfg) {
    struct sigaction sa {};
    sa.sa_handler = count_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    // Under mpirun a sweep spreads its rows over the processes (sweep_peers.hpp); destroyed at
    // the end of this scope (MPI_Finalize), after the results are written.
    const std::unique_ptr<SweepPeers> peers = join_mpi_sweep();
    const CommandOutcome outcome = cfg.tune ? run_tune_command(cfg, std::cout, std::cerr, &g_interrupts, tty, peers.get())
                                            : run_sweep_command(cfg, std::cout, std::cerr, &g_interrupts, tty, peers.get());
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

Profile load_run_profile(const RunConfig& cfg) {
    return cfg.profile_file.empty() ? load_profile_by_soc(cfg.soc, default_profile_dir()) : load_profile(cfg.profile_file);
}

int run(int argc, char** argv) {
    RunConfig cfg = parse_run_config(argc, argv);
    if (cfg.list_ops) {
        fmt::print("{}", list_ops_text());
        return 0;
    }
    // Started P times by mpirun, anything but a sweep would run P times over the same files.
    if (const int launched = mpi_launch_size_from_env(); launched > 1 && cfg.sweep_file.empty() && !cfg.tune) {
        throw SimError(fmt::format("started by mpirun with {} processes: only --sweep and --tune spread over "
                                   "processes; run a single configuration without mpirun",
                                   launched));
    }
    if (cfg.tune || !cfg.sweep_file.empty()) return run_batch(cfg);
    cfg.record_log = cfg.record_log || !cfg.trace_file.empty();
    const Profile profile = load_run_profile(cfg);
    apply_profile_defaults(cfg, profile);
    validate_run_config(cfg, buffer_limits_of(profile));
    if (!cfg.quiet) {
        const std::string what = cfg.op == "allgather_gemm"
                                     ? std::string("AllGather+GEMM")
                                     : fmt::format("{} ({} variant, {} schedule, {} -> {}, bias {})", cfg.op, cfg.variant,
                                                   cfg.schedule, cfg.dtype, cfg.out_dtype, cfg.bias);
        fmt::print("[INFO] Tandem: {} on {} x {} ({} mode), M={} K={} N={}, base {}x{}, blocks {}/{} "
                   "(compute/comm), comm mode {}\n",
                   what, cfg.ranks, profile.name, cfg.timing_only ? "timing-only" : "functional", cfg.m, cfg.k, cfg.n,
                   cfg.base_m, cfg.base_n, *cfg.compute_blocks, *cfg.comm_blocks, comm_mode_name(cfg.comm_mode));
        fmt::print("[INFO] Running compute-only, sequential and pipelined views...\n");
        std::fflush(stdout);
    }
    const ProgramOutput out = run_program(cfg, profile);
    write_program_files(cfg, out);
    if (!cfg.json_file.empty()) write_json_atomic(cfg.json_file, to_json(out.results));
    if (!cfg.quiet) {
        switch (out.results.verification) {
            case Verification::Passed: fmt::print("[INFO] Functional run completed. Verification PASSED.\n"); break;
            case Verification::Failed: fmt::print("[ERROR] Verification FAILED.\n{}", out.failure_report); break;
            case Verification::Skipped: fmt::print("[INFO] Timing-only run: no data, verification skipped.\n"); break;
        }
    }
    fmt::print("{}", format_summary(out.results));  // --quiet keeps the summary (and errors)
    if (!cfg.quiet) {
        fmt::print("[INFO] simulated {} instructions in {:.2f} s of host time\n", out.bench.instructions, out.wall_seconds);
        if (!cfg.timing_only) fmt::print("[INFO] outputs: {}/output_rank<r>.bin\n", cfg.out_dir);
    }
    if (cfg.sanitize) {
        if (out.bench.sanitizer_total > 0) {
            std::cerr << format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total);
            return kSanitizerExitCode;
        }
        if (!cfg.quiet) fmt::print("[SANITIZE] clean: no violation found\n");
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
        return report_cli_error(e, std::cout, std::cerr);
    } catch (const tandem::SanitizerFailure& e) {
        std::cerr << e.what();
        return tandem::host::kSanitizerExitCode;
    } catch (const tandem::SimError& e) {
        std::cerr << "[ERROR] " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "[ERROR] internal error: " << e.what() << "\n";
        return 3;
    }
}
