// The sanitizer's cost (issue 17): a sanitized functional run of AllGather+GEMM 4 x 2048 x 1024 x
// 1024 must take at most 3x the unsanitized one.
//
// In one process, alternately (so a change in the machine's load hits both alike), each
// repetition runs:
//   Program   run_program() with and without --sanitize: input generation, the three views, the
//             golden and verification, as `tandem --op allgather_gemm ... [--sanitize]` does it
//             (minus process start and output files). The figure.
//   Views     run_op_views() alone on pre-generated inputs, with and without --sanitize: the
//             simulation only, where all of the sanitizer's work is (a stricter ratio).
// Times are process CPU time (every thread), the best of the repetitions: the machine is shared,
// and CPU time is what another load disturbs least. Wall times are printed too.
//
// Usage: sanitizer_cost_bench [--reps N] [--ranks R --gm M --gk K --gn N]
//   default: --reps 3 --ranks 4 --gm 2048 --gk 1024 --gn 1024.
// Prints one line per measurement and the two ratios; exits 1 if a sanitized run found a
// violation or a run failed verification (the figure would be meaningless).
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/host_measure.hpp"
#include "host/run/op_session.hpp"
#include "host/cli/options.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "host/cli/command_line.hpp"
#include "sim/profile.hpp"
#include "sim/sanitize/sanitizer.hpp"

namespace {

using namespace tandem;
using namespace tandem::host;

struct Shape {
    int ranks = 4, m = 2048, k = 1024, n = 1024;
};

ResolvedRun config_of(const Profile& profile, const Shape& s, bool sanitize) {
    const std::vector<std::string> args = {"tandem", "--op", "allgather_gemm", "-n", std::to_string(s.ranks), "--gm",
                                           std::to_string(s.m), "--gk", std::to_string(s.k), "--gn", std::to_string(s.n)};
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    RunRequest cfg = parse_command_line(static_cast<int>(argv.size()), argv.data()).run;
    cfg.sanitize = sanitize;
    return resolve_run(cfg, profile);  // the ops facade
}

struct Best {
    double cpu_s = 0;
    double wall_s = 0;
    void keep(double cpu, double wall) {
        cpu_s = cpu_s == 0 ? cpu : std::min(cpu_s, cpu);
        wall_s = wall_s == 0 ? wall : std::min(wall_s, wall);
    }
};

int parse_int(const char* flag, const char* v) {
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || x < 1) {
        std::fprintf(stderr, "%s: '%s' is not a positive integer\n", flag, v);
        std::exit(2);
    }
    return static_cast<int>(x);
}

}  // namespace

int main(int argc, char** argv) {
    Shape s;
    int reps = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--reps N] [--ranks R --gm M --gk K --gn N]\n", argv[0]);
            return 2;
        }
        const int v = parse_int(argv[i], argv[i + 1]);
        ++i;
        if (a == "--reps") reps = v;
        else if (a == "--ranks") s.ranks = v;
        else if (a == "--gm") s.m = v;
        else if (a == "--gk") s.k = v;
        else if (a == "--gn") s.n = v;
        else {
            std::fprintf(stderr, "unknown flag %s\n", a.c_str());
            return 2;
        }
    }
    openblas_set_num_threads(1);  // as host/cli/main.cpp
    const Profile profile = load_profile_by_soc("Ascend910B1", default_profile_dir());
    const ResolvedRun plain = config_of(profile, s, false);
    const ResolvedRun sanitized = config_of(profile, s, true);
    const OpInputs inputs = make_inputs(plain);
    using tandem::bench::cpu_now;
    using tandem::bench::wall_now;

    Best program[2], views[2];  // [0] plain, [1] sanitized
    bool ok = true;
    for (int r = 0; r < reps; ++r) {
        for (int san = 0; san < 2; ++san) {
            const ResolvedRun& cfg = san ? sanitized : plain;
            double c0 = cpu_now(), w0 = wall_now();
            const ProgramOutput out = run_program(cfg, profile);
            program[san].keep(cpu_now() - c0, wall_now() - w0);
            if (out.results.verification != Verification::Passed) {
                std::fprintf(stderr, "program run (%s) did not verify\n", san ? "sanitized" : "plain");
                ok = false;
            }
            if (out.bench.sanitizer_total > 0) {
                std::fprintf(stderr, "%s", format_sanitizer_report(out.bench.sanitizer_violations, out.bench.sanitizer_total).c_str());
                ok = false;
            }
            c0 = cpu_now();
            w0 = wall_now();
            const ViewsOutcome v = run_op_views(profile, cfg, &inputs);
            views[san].keep(cpu_now() - c0, wall_now() - w0);
            if (v.sanitizer_total > 0) ok = false;
        }
    }
    std::printf("sanitizer cost, AllGather+GEMM %d x %d x %d x %d, functional, best of %d (process CPU time; wall)\n",
                s.ranks, s.m, s.k, s.n, reps);
    std::printf("  Program   plain %7.3f s (%7.3f s wall)   sanitized %7.3f s (%7.3f s wall)   ratio %.2fx (wall %.2fx)\n",
                program[0].cpu_s, program[0].wall_s, program[1].cpu_s, program[1].wall_s, program[1].cpu_s / program[0].cpu_s,
                program[1].wall_s / program[0].wall_s);
    std::printf("  Views     plain %7.3f s (%7.3f s wall)   sanitized %7.3f s (%7.3f s wall)   ratio %.2fx (wall %.2fx)\n",
                views[0].cpu_s, views[0].wall_s, views[1].cpu_s, views[1].wall_s, views[1].cpu_s / views[0].cpu_s,
                views[1].wall_s / views[0].wall_s);
    std::printf("  target: Program ratio <= 3x: %s\n", program[1].cpu_s <= 3 * program[0].cpu_s ? "met" : "NOT met");
    std::printf("  peak RSS %.0f MiB\n", static_cast<double>(tandem::bench::peak_rss_kib()) / 1024.0);
    return ok ? 0 : 1;
}
