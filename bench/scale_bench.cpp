// Timing-only at scale (issue 6, items 3 and 4): the simulator's own speed and memory.
//
//   scale/calibration/...   the five calibration rows plus 8 ranks x 16384x4096x4096, each run as
//                           `allgather_gemm --timing-only` runs it (run_op_views: cluster
//                           set-up, the three views, tear-down), one after another in this
//                           process. Target: all six in < 2 s wall on the 2-core machine, and
//                           >= 10 M simulated instructions per second per host core.
//   scale/ranks/...         32 and 64 ranks x 16384x4096x4096 (full mesh, mesh comm mode), and,
//                           when an A3 profile (a switched node) is shipped (sim/profiles, e.g.
//                           Ascend910_9372), 32 ranks on it with --comm-mode ring. Each of these
//                           runs in a child process of its own (this program re-executed with
//                           --child), so its peak RSS (getrusage ru_maxrss of the child) is that
//                           case's alone. Target: 64 ranks < 60 s, < 2 GiB.
//
// Counters and summary lines: wall seconds of the simulation (inside the process that runs it,
// profile already loaded), simulated instructions, instructions per wall second, per wall second
// per host core (hardware_concurrency), and per CPU second (all threads: what one busy host core
// gets through), and peak RSS.
//
//   scale/scaling/...       (--scaling, issue 18) 256 rows per rank, K = N = 4096, for 8, 64, 128,
//                           256 and 384 ranks, full mesh (Ascend910B1, --comm-mode mesh) and A3
//                           (the switched profile, --comm-mode ring), each in a child
//                           process. Targets: 384 ranks < 5 min and < 4 GiB each; the instruction
//                           rate at 256 ranks >= 70% of the rate at 8 ranks (same topology).
//
//   scale/ops/...           (--ops, issue 14) every registered op with its default variant
//                           (--ops-all-variants: every variant) at 64 ranks of Ascend910B1 on a
//                           medium shape of its own (OpDesc::scale_shape: one its constraints
//                           accept, a few seconds of host time each), timing-only, each in a child
//                           process: wall, CPU seconds, peak RSS and the simulated compute-only,
//                           sequential and pipelined times (slowest rank). Check: every run
//                           completes.
//
// Flags (besides Google Benchmark's): --no-ranks skips the child cases; --no-64 skips only the
// 64-rank case; --ring64 adds 64 ranks x 16384x4096x4096 with --comm-mode ring; --scaling adds the
// issue-18 series (--scaling-only: that series alone; --scaling-ranks 8,64,... picks its rank
// counts; --scaling-topo mesh|ring picks one topology); --ops adds the op series (--ops-only: that
// series alone; --ops-all-variants: every variant; --ops-ranks R: another rank count); --child
// RANKS M K N SOC MODE [OP VARIANT] runs one case and prints one result line (internal).
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/run/op_session.hpp"
#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "host/cli/command_line.hpp"
#include "kernels/registry.hpp"
#include "sim/profile.hpp"

extern char** environ;

namespace {

using namespace tandem;
using namespace tandem::host;

struct Case {
    int ranks, m, k, n;
    std::string soc = "Ascend910B1";
    std::string comm_mode = "mesh";
    std::string op = {};       // empty: allgather_gemm as its own program runs it
    std::string variant = {};  // with op: the variant (empty: the op's default)
};

struct Measured {
    double wall_s = 0;       // the simulation, inside the process that ran it
    double cpu_s = 0;        // process CPU time over the same span (all threads)
    std::int64_t instructions = 0;
    long peak_rss_kib = 0;   // the process's peak RSS (own process for child cases)
    bool ok = false;
    // Simulated times of the views on the slowest rank (us).
    double compute_only_us = 0, sequential_us = 0, pipelined_us = 0;
};

std::string case_name(const Case& c) {
    std::string s = std::to_string(c.ranks) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n);
    if (c.soc != "Ascend910B1") s += "/" + c.soc;
    if (c.comm_mode != "mesh") s += "/" + c.comm_mode;
    if (!c.op.empty()) s = c.op + "/" + (c.variant.empty() ? "default" : c.variant) + "/" + s;
    return s;
}

using tandem::bench::cpu_now;
using tandem::bench::wall_now;
using tandem::bench::host_cores;
using tandem::bench::peak_rss_kib;

// The run exactly as `allgather_gemm -v SOC -n R --gm M --gk K --gn N --comm-mode MODE --timing-only`,
// or with an op, `tandem --op OP [--variant V] -v SOC -n R --gm M --gk K --gn N --timing-only`.
Measured run_case(const Case& c) {
    std::vector<std::string> args = {c.op.empty() ? "allgather_gemm" : "tandem", "-v", c.soc, "-n", std::to_string(c.ranks),
                                     "--gm", std::to_string(c.m), "--gk", std::to_string(c.k),
                                     "--gn", std::to_string(c.n), "--timing-only"};
    if (c.op.empty()) {
        args.insert(args.end(), {"--comm-mode", c.comm_mode});
    } else {
        args.insert(args.end(), {"--op", c.op});
        if (!c.variant.empty()) args.insert(args.end(), {"--variant", c.variant});
    }
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    const RunRequest request = parse_command_line(static_cast<int>(argv.size()), argv.data()).run;
    const Profile profile = load_profile_by_soc(request.soc, default_profile_dir());
    const ResolvedRun cfg = resolve_run(request, profile);  // the ops facade
    Measured m;
    const double w0 = wall_now(), c0 = cpu_now();
    const ViewsOutcome out = run_op_views(profile, cfg, nullptr);
    m.wall_s = wall_now() - w0;
    m.cpu_s = cpu_now() - c0;
    m.instructions = out.instructions;
    m.peak_rss_kib = peak_rss_kib();
    m.ok = out.slowest.pipelined_us > 0;
    m.compute_only_us = out.slowest.compute_only_us;
    m.sequential_us = out.slowest.seq_comm_us + out.slowest.seq_compute_us;
    m.pipelined_us = out.slowest.pipelined_us;
    return m;
}

// ---- child cases: this program re-executed with --child ----

std::string g_self;  // path of this executable

Measured run_child(const Case& c, double& spawn_wall_s) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<std::string> args = {g_self, "--child", std::to_string(c.ranks), std::to_string(c.m),
                                     std::to_string(c.k), std::to_string(c.n), c.soc, c.comm_mode};
    if (!c.op.empty()) args.insert(args.end(), {c.op, c.variant.empty() ? "-" : c.variant});
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const double w0 = wall_now();
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, g_self.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    Measured m;
    if (rc != 0) {
        close(fds[0]);
        return m;
    }
    std::string text;
    char buf[512];
    for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(got));
    close(fds[0]);
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    spawn_wall_s = wall_now() - w0;
    long long instr = 0;
    int ok = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        std::sscanf(text.c_str(), "RESULT %lf %lf %lld %ld %d %lf %lf %lf", &m.wall_s, &m.cpu_s, &instr, &m.peak_rss_kib,
                    &ok, &m.compute_only_us, &m.sequential_us, &m.pipelined_us) == 8) {
        m.instructions = instr;
        m.ok = ok != 0;
        m.peak_rss_kib = std::max(m.peak_rss_kib, static_cast<long>(ru.ru_maxrss));  // the child's own peak
    }
    return m;
}

int child_main(int argc, char** argv) {
    if (argc < 8) return 2;
    Case c{std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), argv[6], argv[7]};
    if (argc >= 10) {
        c.op = argv[8];
        c.variant = std::strcmp(argv[9], "-") == 0 ? "" : argv[9];
    }
    try {
        const Measured m = run_case(c);
        std::printf("RESULT %.6f %.6f %lld %ld %d %.6f %.6f %.6f\n", m.wall_s, m.cpu_s,
                    static_cast<long long>(m.instructions), m.peak_rss_kib, m.ok ? 1 : 0, m.compute_only_us,
                    m.sequential_us, m.pipelined_us);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "[ERROR] %s\n", e.what());
        return 1;
    }
}

// ---- benchmarks ----

struct Row {
    std::string group;  // "calibration" or "ranks"
    Case c;
    Measured m;
    double spawn_wall_s = 0;
};
std::vector<Row>& rows() {
    static std::vector<Row> r;
    return r;
}

void set_counters(benchmark::State& state, const Measured& m) {
    state.counters["instr"] = static_cast<double>(m.instructions);
    state.counters["Minstr/s"] = m.wall_s > 0 ? m.instructions / m.wall_s / 1e6 : 0;
    state.counters["Minstr/core-s"] = m.cpu_s > 0 ? m.instructions / m.cpu_s / 1e6 : 0;
    state.counters["peak_rss_MiB"] = static_cast<double>(m.peak_rss_kib) / 1024.0;
}

void BM_InProcess(benchmark::State& state, std::size_t row) {
    Row& r = rows()[row];
    for (auto _ : state) {
        r.m = run_case(r.c);
        state.SetIterationTime(r.m.wall_s);
        if (!r.m.ok) state.SkipWithError("run failed");
    }
    set_counters(state, r.m);
}

void BM_Child(benchmark::State& state, std::size_t row) {
    Row& r = rows()[row];
    for (auto _ : state) {
        r.m = run_child(r.c, r.spawn_wall_s);
        state.SetIterationTime(std::max(r.m.wall_s, 1e-9));
        if (!r.m.ok) state.SkipWithError("child run failed (see its stderr)");
    }
    set_counters(state, r.m);
}

void print_summary() {
    const int cores = host_cores();
    Measured total;
    int n_cal = 0;
    for (const Row& r : rows()) {
        if (r.m.wall_s <= 0) continue;
        const Measured& m = r.m;
        std::printf("scale: %-36s %7.3f s wall, %12lld instr, %6.2f M instr/s (%5.2f M per core-s of wall, %5.2f M per "
                    "CPU-s), peak RSS %.0f MiB%s%s\n",
                    case_name(r.c).c_str(), m.wall_s, static_cast<long long>(m.instructions), m.instructions / m.wall_s / 1e6,
                    m.instructions / m.wall_s / 1e6 / cores, m.cpu_s > 0 ? m.instructions / m.cpu_s / 1e6 : 0.0,
                    static_cast<double>(m.peak_rss_kib) / 1024.0,
                    r.group == "calibration" ? " (process peak so far)" : " (own process)", m.ok ? "" : "  FAILED");
        if (r.group == "calibration") {
            total.wall_s += m.wall_s;
            total.cpu_s += m.cpu_s;
            total.instructions += m.instructions;
            total.peak_rss_kib = std::max(total.peak_rss_kib, m.peak_rss_kib);
            ++n_cal;
        }
    }
    if (n_cal == 6) {
        std::printf("scale: 5 calibration rows + 8x16384x4096x4096, 3 views, timing-only: %.2f s wall (target < 2 s), "
                    "%.1f M instr/s = %.1f M per host core (target >= 10), %.1f M per CPU-s, peak RSS %.0f MiB, %d host "
                    "cores\n",
                    total.wall_s, total.instructions / total.wall_s / 1e6, total.instructions / total.wall_s / 1e6 / cores,
                    total.instructions / total.cpu_s / 1e6, static_cast<double>(total.peak_rss_kib) / 1024.0, cores);
    }
    for (const Row& r : rows()) {
        if (r.group != "ranks" || r.m.wall_s <= 0) continue;
        std::printf("scale: %d ranks x %dx%dx%d (%s, %s), 3 views, timing-only: %.2f s wall (%.2f s with process "
                    "start), %.1f M instr/s, peak RSS %.0f MiB%s\n",
                    r.c.ranks, r.c.m, r.c.k, r.c.n, r.c.soc.c_str(), r.c.comm_mode.c_str(), r.m.wall_s, r.spawn_wall_s,
                    r.m.instructions / r.m.wall_s / 1e6, static_cast<double>(r.m.peak_rss_kib) / 1024.0,
                    r.c.ranks == 64 && r.c.comm_mode == "mesh" ? (r.m.wall_s < 60 && r.m.peak_rss_kib < 2L * 1024 * 1024 ? "  (target < 60 s, < 2 GiB: met)"
                                                                                           : "  (target < 60 s, < 2 GiB: NOT met)")
                                    : "");
    }
}

void print_scaling_summary() {
    // Per topology: the rate at 8 ranks is the reference for the others.
    for (const char* mode : {"mesh", "ring"}) {
        // Also per CPU second: on a shared machine the wall rate measures the load as much as Tandem.
        double rate8 = 0, cpu_rate8 = 0;
        for (const Row& r : rows()) {
            if (r.group != "scaling" || r.c.comm_mode != mode || r.c.ranks != 8 || !r.m.ok) continue;
            rate8 = r.m.instructions / r.m.wall_s;
            cpu_rate8 = r.m.cpu_s > 0 ? r.m.instructions / r.m.cpu_s : 0;
        }
        for (const Row& r : rows()) {
            if (r.group != "scaling" || r.c.comm_mode != mode || r.m.wall_s <= 0) continue;
            const double rate = r.m.instructions / r.m.wall_s;
            const double cpu_rate = r.m.cpu_s > 0 ? r.m.instructions / r.m.cpu_s : 0;
            std::string verdict;
            if (r.c.ranks == 384) {
                const bool met = r.m.ok && r.m.wall_s < 300 && r.m.peak_rss_kib < 4L * 1024 * 1024;
                verdict = met ? "  (target < 300 s, < 4 GiB: met)" : "  (target < 300 s, < 4 GiB: NOT met)";
            }
            if (r.c.ranks == 256 && rate8 > 0) {
                verdict = rate >= 0.7 * rate8 ? "  (target >= 70% of the 8-rank rate: met)"
                                              : "  (target >= 70% of the 8-rank rate: NOT met)";
            }
            std::printf("scaling: %-4s %3d ranks x %dx%dx%d (%s), timing-only: %8.2f s wall, %12lld instr, %6.2f M "
                        "instr/s%s, %6.2f M per CPU-s%s, peak RSS %6.0f MiB%s%s\n",
                        mode, r.c.ranks, r.c.m, r.c.k, r.c.n, r.c.soc.c_str(), r.m.wall_s,
                        static_cast<long long>(r.m.instructions), rate / 1e6,
                        rate8 > 0 ? (" = " + std::to_string(static_cast<int>(100 * rate / rate8 + 0.5)) + "% of 8 ranks").c_str() : "",
                        cpu_rate / 1e6,
                        cpu_rate8 > 0 ? (" = " + std::to_string(static_cast<int>(100 * cpu_rate / cpu_rate8 + 0.5)) + "%").c_str() : "",
                        static_cast<double>(r.m.peak_rss_kib) / 1024.0, verdict.c_str(), r.m.ok ? "" : "  FAILED");
        }
    }
}

void print_ops_summary() {
    for (const Row& r : rows()) {
        if (r.group != "ops") continue;
        const Measured& m = r.m;
        std::printf("ops: %-22s %-18s %d ranks x %dx%dx%d, timing-only: %7.2f s wall, %7.2f s CPU, peak RSS %6.0f MiB; "
                    "simulated compute-only %9.1f us, sequential %9.1f us, pipelined %9.1f us (%.2fx)%s\n",
                    r.c.op.c_str(), r.c.variant.empty() ? "(default)" : r.c.variant.c_str(), r.c.ranks, r.c.m, r.c.k,
                    r.c.n, m.wall_s, m.cpu_s, static_cast<double>(m.peak_rss_kib) / 1024.0, m.compute_only_us,
                    m.sequential_us, m.pipelined_us, m.pipelined_us > 0 ? m.sequential_us / m.pipelined_us : 0.0,
                    m.ok ? "" : "  FAILED (did not complete)");
    }
}

// The first shipped profile whose node is switched (A3 parts), if any.
std::string a3_soc() {
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(default_profile_dir(), ec)) {
        if (e.path().extension() != ".toml") continue;
        try {
            const Profile p = load_profile(e.path());
            if (p.interconnect.topology == TopologyKind::Switched) found.push_back(p.name);
        } catch (const std::exception&) {
        }
    }
    std::sort(found.begin(), found.end());
    // Prefer the 9372 named in the brief, then any other.
    for (const std::string& s : found)
        if (s == "Ascend910_9372") return s;
    return found.empty() ? "" : found.front();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return child_main(argc, argv);
    g_self = std::filesystem::read_symlink("/proc/self/exe").string();
    bool with_ranks = true, with_64 = true, ring64 = false, scaling = false, scaling_only = false;
    bool ops = false, ops_only = false, ops_all_variants = false;
    int ops_ranks = 64;
    std::vector<int> scaling_ranks = {8, 64, 128, 256, 384};
    std::vector<std::string> scaling_modes = {"mesh", "ring"};
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--scaling") == 0) scaling = true;
        else if (std::strcmp(argv[i], "--scaling-only") == 0) scaling = scaling_only = true;
        else if (std::strcmp(argv[i], "--scaling-ranks") == 0 && i + 1 < argc) {
            scaling_ranks.clear();
            std::stringstream list(argv[++i]);
            for (std::string item; std::getline(list, item, ',');) scaling_ranks.push_back(std::stoi(item));
        } else if (std::strcmp(argv[i], "--scaling-topo") == 0 && i + 1 < argc) {
            scaling_modes = {argv[++i]};
        } else if (std::strcmp(argv[i], "--ops") == 0) ops = true;
        else if (std::strcmp(argv[i], "--ops-only") == 0) ops = ops_only = true;
        else if (std::strcmp(argv[i], "--ops-all-variants") == 0) ops = ops_all_variants = true;
        else if (std::strcmp(argv[i], "--ops-ranks") == 0 && i + 1 < argc) ops_ranks = std::stoi(argv[++i]);
        else if (std::strcmp(argv[i], "--no-ranks") == 0) with_ranks = false;
        else if (std::strcmp(argv[i], "--no-64") == 0) with_64 = false;
        else if (std::strcmp(argv[i], "--ring64") == 0) ring64 = true;
        else rest.push_back(argv[i]);
    }
    int rest_argc = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_argc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;

    const std::vector<Case> calibration = {{2, 2048, 2048, 1024}, {2, 4096, 4096, 2048}, {2, 4096, 4096, 4096},
                                           {2, 8192, 4096, 4096}, {4, 4096, 4096, 4096}, {8, 16384, 4096, 4096}};
    const bool only_series = scaling_only || ops_only;
    if (!only_series)
        for (const Case& c : calibration) rows().push_back(Row{"calibration", c, {}, 0});
    if (with_ranks && !only_series) {
        rows().push_back(Row{"ranks", Case{32, 16384, 4096, 4096}, {}, 0});
        if (with_64) rows().push_back(Row{"ranks", Case{64, 16384, 4096, 4096}, {}, 0});
        if (ring64) rows().push_back(Row{"ranks", Case{64, 16384, 4096, 4096, "Ascend910B1", "ring"}, {}, 0});
        const std::string a3 = a3_soc();
        if (!a3.empty()) rows().push_back(Row{"ranks", Case{32, 16384, 4096, 4096, a3, "ring"}, {}, 0});
        else std::printf("scale: no switched (A3) profile in %s: the A3 case is skipped\n", default_profile_dir().c_str());
    }
    if (ops) {
        for (const kernels::OpDesc* op : kernels::registered_ops()) {
            // The op's shape at scale (OpDesc::scale_shape: every variant's constraints hold at 64
            // ranks with its tiles, and a run takes seconds, not minutes, of host time).
            const kernels::RunShape& shape = op->scale_shape;
            if (shape.m <= 0) {
                std::printf("ops: %s has no scale_shape in its OpDesc: skipped\n", op->name.c_str());
                continue;
            }
            std::vector<std::string> variants = {""};
            if (ops_all_variants) {
                variants.clear();
                for (const kernels::VariantDesc& v : op->variants) variants.push_back(v.name);
            }
            for (const std::string& v : variants) {
                Case c{ops_ranks, shape.m, shape.k, shape.n};
                c.op = op->name;
                c.variant = v;
                rows().push_back(Row{"ops", c, {}, 0});
            }
        }
    }
    if (scaling) {
        const std::string a3 = a3_soc();
        for (const std::string& mode : scaling_modes) {
            if (mode == "ring" && a3.empty()) {
                std::printf("scaling: no switched (A3) profile in %s: the ring series is skipped\n", default_profile_dir().c_str());
                continue;
            }
            for (int ranks : scaling_ranks) {
                rows().push_back(Row{"scaling", Case{ranks, 256 * ranks, 4096, 4096, mode == "ring" ? a3 : "Ascend910B1", mode}, {}, 0});
            }
        }
    }
    for (std::size_t i = 0; i < rows().size(); ++i) {
        const Row& r = rows()[i];
        benchmark::RegisterBenchmark(("scale/" + r.group + "/" + case_name(r.c)).c_str(),
                                     r.group == "calibration" ? BM_InProcess : BM_Child, i)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    print_summary();
    print_scaling_summary();
    print_ops_summary();
    return 0;
}
