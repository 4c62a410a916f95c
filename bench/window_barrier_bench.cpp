// Simulator speed: what one window costs the host, apart from the instructions run in it.
//
// A timing-only run is streams (one per rank here) taking turns in windows of simulated time,
// each window ended by a barrier (docs/ARCHITECTURE.md, "Logical processes and windows"). A
// stream woken for a window pays for the window itself (its booking horizon, its memory view's
// history, handing in its traffic, arriving at the barrier, the barrier's serial part) and for
// each block it resumes. This program makes every stream wake in nearly every window with very
// little to do: each block runs a loop of a 128 KiB TLOAD and a pipe_barrier(PIPE_ALL), so its
// scalar waits for each load (about a microsecond of simulated time, about a window) and
// parks at the next window's edge. It runs a grid of ranks x blocks per rank and fits, for each
// rank count by least squares over the block counts, per stream-window:
//
//     process CPU per stream-window = a + b x blocks per rank
//
// `a` is a stream-window's cost with nothing in it (its booking horizon, its views' history,
// handing in, arriving, its share of the barrier and of the pool threads' hand-offs), `b` a
// block's turn in it (its resume, its load booked on the chip's memory, its barrier). Each case
// prints its own CPU and wall time too.
//
//   build/tests/window_barrier_bench [--ranks 2,8,32] [--blocks 1,8,24] [--loops N] [--reps N]
//                                    [--host-threads N]
//
// Defaults: ranks 2,8,32; blocks 1,8,24; 5000 loops; the best of 3 runs per case (CPU seconds,
// the least disturbed by other work on the machine); the coordinator's pool one thread per host
// core, as a run's (--host-threads N: N).
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/host_measure.hpp"
#include "sim/host_threads.hpp"
#include "sim/isa/isa.hpp"
#include "sim/profile.hpp"
#include "sim/runtime/runtime.hpp"

namespace {

using namespace tandem;

constexpr int kRows = 256, kCols = 256;  // 128 KiB of fp16 a load: about a window's time
constexpr int kLoadBytes = kRows * kCols * 2;

Task load_and_wait_block(BlockCtx& blk, const GmAllocation& src, int loops) {
    Tile& ub = blk.alloc_tile(MemKind::UB, kRows, kCols, DType::F16, "slab");
    const GmTensor slab(src, std::int64_t{blk.block_idx()} * kLoadBytes, kRows, kCols, kCols, DType::F16);
    for (int i = 0; i < loops; ++i) {
        co_await TLOAD(ub, slab);
        pipe_barrier(blk, PIPE_ALL);  // the scalar waits for the load: the next one issues a window on
    }
}

struct Case {
    int ranks = 0;
    int blocks = 0;
    double cpu_s = 0;          // best of the runs
    double wall_s = 0;         // of the same run
    double stream_windows = 0;  // windows each stream was woken for, summed over the streams
    double instructions = 0;
};

Case run_case(const Profile& prof, int ranks, int blocks, int loops, int reps, int host_threads) {
    Case c{ranks, blocks, 1e300, 0, 0};
    for (int rep = 0; rep < reps; ++rep) {
        ClusterOptions options{ranks, DataMode::TimingOnly, false};
        options.host_threads = host_threads;
        auto rt = std::make_unique<Runtime>(prof, options);
        std::vector<const GmAllocation*> src(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r)
            src[static_cast<std::size_t>(r)] = &rt->host(r).malloc("src", std::int64_t{blocks} * kLoadBytes);
        std::vector<std::int64_t> windows(static_cast<std::size_t>(ranks), 0), instr(static_cast<std::size_t>(ranks), 0);
        const double cpu0 = bench::cpu_now();
        const double wall0 = bench::wall_now();
        rt->run_hosts([&](HostContext& host) {
            const int r = host.rank();
            Stream& s = host.create_stream("loads");
            s.launch(KernelLaunch{"load_and_wait", CoreType::AIV, blocks, [&, r](BlockCtx& blk) {
                                      return load_and_wait_block(blk, *src[static_cast<std::size_t>(r)], loops);
                                  }});
            s.synchronize();
            for (const KernelStats& k : s.kernel_stats()) {
                windows[static_cast<std::size_t>(r)] += k.windows_run;
                instr[static_cast<std::size_t>(r)] += k.instructions;
            }
        });
        const double cpu = bench::cpu_now() - cpu0;
        const double wall = bench::wall_now() - wall0;
        rt.reset();
        if (cpu < c.cpu_s) {
            c.cpu_s = cpu;
            c.wall_s = wall;
        }
        c.stream_windows = 0;
        c.instructions = 0;
        for (int r = 0; r < ranks; ++r) {
            c.stream_windows += static_cast<double>(windows[static_cast<std::size_t>(r)]);
            c.instructions += static_cast<double>(instr[static_cast<std::size_t>(r)]);
        }
    }
    return c;
}

std::vector<int> parse_list(const std::string& flag, const std::string& text, long most = 4096) {
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        const long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > most)
            throw std::invalid_argument(flag + ": '" + item + "' is not a whole number from 1 to " + std::to_string(most));
        out.push_back(static_cast<int>(v));
    }
    if (out.empty()) throw std::invalid_argument(flag + ": give at least one value");
    return out;
}

int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
    const std::vector<int> v = parse_list(flag, text, hi);
    if (v.size() != 1 || v[0] < lo || v[0] > hi)
        throw std::invalid_argument(flag + ": '" + text + "' must be one whole number from " + std::to_string(lo) +
                                    " to " + std::to_string(hi));
    return v[0];
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> ranks = {2, 8, 32};
    std::vector<int> blocks = {1, 8, 24};
    int loops = 5000;
    int reps = 3;
    int host_threads = 0;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "-h" || a == "--help") {
                std::printf("usage: window_barrier_bench [--ranks 2,8,32] [--blocks 1,8,24] [--loops N] [--reps N] [--host-threads N]\n");
                return 0;
            }
            if (i + 1 >= argc) throw std::invalid_argument(a + ": needs a value");
            const std::string v = argv[++i];
            if (a == "--ranks") ranks = parse_list(a, v);
            else if (a == "--blocks") blocks = parse_list(a, v);
            else if (a == "--loops") loops = parse_int(a, v, 1, 1000000);
            else if (a == "--reps") reps = parse_int(a, v, 1, 100);
            else if (a == "--host-threads") host_threads = parse_int(a, v, 1, 256);
            else throw std::invalid_argument("unknown option '" + a + "' (see --help)");
        }
        const Profile prof = load_profile_by_soc("Ascend910B1", default_profile_dir());
        const int max_blocks = prof.chip.aiv_cores;
        for (int b : blocks)
            if (b > max_blocks)
                throw std::invalid_argument("--blocks: " + std::to_string(b) + " is more than the " +
                                            std::to_string(max_blocks) + " vector cores of a chip");
        std::vector<Case> cases;
        std::printf("window_barrier: %d loads of %d B per block, best of %d runs, %d host cores, pool threads: %d\n", loops,
                    kLoadBytes, reps, host_core_count(), host_threads > 0 ? host_threads : host_core_count());
        std::printf("%6s %7s %14s %13s %9s %9s %22s\n", "ranks", "blocks", "stream-windows", "instructions", "CPU s",
                    "wall s", "CPU us per stream-window");
        for (int r : ranks) {
            for (int b : blocks) {
                const Case c = run_case(prof, r, b, loops, reps, host_threads);
                cases.push_back(c);
                std::printf("%6d %7d %14.0f %13.0f %9.3f %9.3f %22.2f\n", c.ranks, c.blocks, c.stream_windows,
                            c.instructions, c.cpu_s, c.wall_s, c.stream_windows > 0 ? c.cpu_s / c.stream_windows * 1e6 : 0.0);
            }
        }
        // Per rank count, a line through its cases: CPU per stream-window = a + b x blocks per rank
        // (each block resumes about once a window), least squares over the block counts.
        for (int r : ranks) {
            double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (const Case& c : cases) {
                if (c.ranks != r || c.stream_windows <= 0) continue;
                const double x = c.blocks, y = c.cpu_s / c.stream_windows * 1e6;
                n += 1;
                sx += x;
                sy += y;
                sxx += x * x;
                sxy += x * y;
            }
            const double det = n * sxx - sx * sx;
            if (n < 2 || det <= 0) continue;
            const double b = (n * sxy - sx * sy) / det;
            const double a = (sy - b * sx) / n;
            std::printf("window_barrier: %d ranks: %.2f us of host CPU per stream-window with nothing in it, %.2f us more "
                        "per block resumed in it (its load and barrier)\n",
                        r, a, b);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "window_barrier_bench: %s\n", e.what());
        return 2;
    }
    return 0;
}
