// What calling through the API costs over the command line for the same simulation (issue 16:
// target <= 5%). The same AllGather+GEMM, functional, all three views, on the same profile:
//   Views  host::run_views() on pre-generated inputs: what `tandem` / run.sh simulates (minus
//          process start, input generation, golden and verification, which the API leaves to
//          the caller: this is the comparison least favourable to the API);
//   Api    Context::ops().run(..., config.all_views = true) on tensors already in the context:
//          the three views plus the API's copies in and out (a fresh workspace each call, as a
//          call without one does; and with a reused workspace).
// Each figure is the best of --reps wall-clock runs (default 3). Prints the ratios.
//   build/tests/api_overhead_bench [--reps N] [--ranks R] [--m M --k K --n N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "host/op_bench.hpp"
#include "host/options.hpp"
#include "host/program.hpp"
#include "tandem/tandem.hpp"

namespace {
template <typename F>
double best_seconds(int reps, F&& f) {
    double best = 1e30;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
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
    tandem::host::RunConfig cfg;
    cfg.ranks = ranks;
    cfg.m = m;
    cfg.k = k;
    cfg.n = n;
    const tandem::Profile profile = tandem::load_profile_by_soc(cfg.soc, tandem::default_profile_dir());
    tandem::host::apply_profile_defaults(cfg, profile);
    const tandem::host::OpInputs inputs = tandem::host::make_inputs(cfg);
    double views_us = 0;
    const double views_s = best_seconds(reps, [&] {
        views_us = tandem::host::run_views(profile, cfg, &inputs).slowest.pipelined_us;
    });

    tandem::Context ctx({.soc = cfg.soc, .ranks = ranks});
    tandem::Tensor a = ctx.zeros(m / ranks, k, tandem::DataType::F16);
    tandem::Tensor b = ctx.zeros(k, n, tandem::DataType::F16);
    tandem::Tensor c = ctx.zeros(m, n, tandem::DataType::F32);
    for (int r = 0; r < ranks; ++r) {
        a.from_host_bits(r, inputs.a[static_cast<std::size_t>(r)].bits.data(), inputs.a[static_cast<std::size_t>(r)].bits.size() * 2);
        // B^T (N x K) bits -> B (K x N)
        const auto& bt = inputs.b_of(r);
        std::vector<std::uint16_t> bb(static_cast<std::size_t>(k) * n);
        for (int nn = 0; nn < n; ++nn)
            for (int kk = 0; kk < k; ++kk) bb[static_cast<std::size_t>(kk) * n + nn] = bt.bits[static_cast<std::size_t>(nn) * k + kk];
        b.from_host_bits(r, bb.data(), bb.size() * 2);
    }
    tandem::OpConfig oc;
    oc.all_views = true;
    double api_us = 0;
    const double api_s = best_seconds(reps, [&] { api_us = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, oc).results().pipelined_us; });
    tandem::Workspace ws;
    const double reuse_s = best_seconds(reps, [&] { ws = ctx.ops().run("allgather_gemm", c, a, b, nullptr, false, oc, ws); });
    std::printf("allgather_gemm %dx%dx%dx%d functional, three views, best of %d:\n", ranks, m, k, n, reps);
    std::printf("  run_views (run.sh's simulation)   %.3f s  pipelined %.3f us\n", views_s, views_us);
    std::printf("  API call, new workspace          %.3f s  pipelined %.3f us  overhead %+.1f%%\n", api_s, api_us,
                100.0 * (api_s / views_s - 1.0));
    std::printf("  API call, reused workspace       %.3f s  overhead %+.1f%%\n", reuse_s, 100.0 * (reuse_s / views_s - 1.0));
    return 0;
}
