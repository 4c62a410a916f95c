// What calling through the API costs over the command line for the same simulation (issue 16:
// target <= 5%). The same AllGather+GEMM, functional, all three views, on the same profile:
//   Views  host::run_op_views() on pre-generated inputs: what `tandem` / run.sh simulates (minus
//          process start, input generation, golden and verification, which the API leaves to
//          the caller: this is the comparison least favourable to the API);
//   Api    Context::ops().run(..., config.all_views = true) on tensors already in the context:
//          the three views plus the API's copies in and out (a fresh workspace each call, as a
//          call without one does; and with a reused workspace).
// The three are run in turn within each repetition (so a change of the shared machine's load
// hits all three alike); each figure is the best of --reps (default 3), in wall-clock seconds
// and in the process's CPU seconds (all threads: steadier than wall time on a loaded machine).
// Prints the ratios.
//   build/tests/api_overhead_bench [--reps N] [--ranks R] [--m M --k K --n N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <string>

#include "host/run/op_session.hpp"
#include "host/ops/op_facade.hpp"
#include "host/run/program.hpp"
#include "tandem/tandem.hpp"

namespace {
struct Cost {
    double wall_s = 1e30;
    double cpu_s = 1e30;
};

// Runs f once, keeping the best wall and CPU times seen in `best`.
template <typename F>
void time_into(Cost& best, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    f();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    best.wall_s = std::min(best.wall_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    best.cpu_s = std::min(best.cpu_s, cpu);
}

void print_row(const char* what, const Cost& c, const Cost& base) {
    std::printf("  %-34s wall %.3f s (%+5.1f%%)  cpu %.3f s (%+5.1f%%)\n", what, c.wall_s, 100.0 * (c.wall_s / base.wall_s - 1.0),
                c.cpu_s, 100.0 * (c.cpu_s / base.cpu_s - 1.0));
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 3, ranks = 2, m = 2048, k = 2048, n = 1024;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (a == "--reps") reps = v;
        else if (a == "--ranks") ranks = v;
        else if (a == "--m") m = v;
        else if (a == "--k") k = v;
        else if (a == "--n") n = v;
    }
    tandem::host::RunRequest cfg;
    cfg.ranks = ranks;
    cfg.m = m;
    cfg.k = k;
    cfg.n = n;
    const tandem::Profile profile = tandem::load_profile_by_soc(cfg.soc, tandem::default_profile_dir());
    const tandem::host::ResolvedRun run = tandem::host::resolve_run(cfg, profile);  // the ops facade
    const tandem::host::OpInputs inputs = tandem::host::make_inputs(run);
    tandem::ContextOptions options;
    options.soc = cfg.soc;
    options.ranks = ranks;
    tandem::Context ctx(options);
    tandem::Tensor a = ctx.zeros(m / ranks, k, tandem::DataType::F16);
    tandem::Tensor b = ctx.zeros(k, n, tandem::DataType::F16);
    tandem::Tensor c = ctx.zeros(m, n, tandem::DataType::F32);
    for (int r = 0; r < ranks; ++r) {
        a.from_host_bits(r, inputs.a[static_cast<std::size_t>(r)].bytes.data(), inputs.a[static_cast<std::size_t>(r)].bytes.size());
        // B^T (N x K) bits -> B (K x N)
        const std::uint16_t* bt = inputs.b_of(r).halves();
        std::vector<std::uint16_t> bb(static_cast<std::size_t>(k) * n);
        for (int nn = 0; nn < n; ++nn)
            for (int kk = 0; kk < k; ++kk) bb[static_cast<std::size_t>(kk) * n + nn] = bt[static_cast<std::size_t>(nn) * k + kk];
        b.from_host_bits(r, bb.data(), bb.size() * 2);
    }
    tandem::OpConfig oc;
    oc.all_views = true;
    double views_us = 0, api_us = 0, reuse_us = 0;
    Cost views, api, reuse;
    tandem::Workspace ws;
    for (int i = 0; i < reps; ++i) {
        time_into(views, [&] { views_us = tandem::host::run_op_views(profile, run, &inputs).slowest.pipelined_us; });
        time_into(api, [&] { api_us = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, oc).results().pipelined_us; });
        time_into(reuse, [&] {
            ws = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, oc, ws);
            reuse_us = ws.results().pipelined_us;
        });
    }
    std::printf("allgather_gemm %dx%dx%dx%d functional, three views, best of %d (pipelined %.3f / %.3f / %.3f us):\n", ranks, m,
                k, n, reps, views_us, api_us, reuse_us);
    print_row("run_op_views (run.sh's simulation)", views, views);
    print_row("API call, new workspace", api, views);
    print_row("API call, reused workspace", reuse, views);
    return views_us == api_us && api_us == reuse_us ? 0 : 1;  // the same simulation, or the comparison is void
}
