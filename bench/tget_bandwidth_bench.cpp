// The remote-read microbenchmark of pto-isa (kernels/manual/a2a3/tget_bandwidth), on Tandem's
// simulated chips: one AIV block of rank 0 reads `size` bytes of fp32 from rank 1's window with
// TGET (remote GM -> UB -> local GM, through one UB staging tile of --chunk-bytes), and again
// with TGET_ASYNC (one copy on the SDMA engine, then WAIT_ASYNC), one kernel per size and
// instruction; the kernels' device time (first block start to last block end, what the example's
// own cycle counter measures) is printed per size with the bandwidth it gives. `./run.sh
// fidelity` compares both with the measured table (sim/calibration/tget_bandwidth_<SoC>.csv).
//
// `--tput` adds the remote-store counterpart, which was not measured: one block's TPUT (local GM
// -> UB -> the peer's window) of each size, one store at a time, through the same staging tile.
// Its small sizes weigh a store's hop latency (interconnect.link_latency_ns, assumed) against its
// bytes: the run on the chip that would fix that latency (sim/CALIBRATION.md, "How sure the
// predictions are").
//
//   build/tests/tget_bandwidth_bench [-v SOC | --profile FILE] [--sizes 4096,16384,...]
//                                    [--chunk-bytes 65536] [--tput] [--json FILE]
//
// The staging tile size of the published kernel is not stated; 64 KiB (a third of the UB) is
// assumed, and it barely matters: a chunk's fixed cost is a few tens of cycles.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/isa/isa.hpp"
#include "sim/profile.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/sim_error.hpp"

namespace {

using namespace tandem;

struct Options {
    std::string soc = "Ascend910B1";
    std::string profile_file;
    std::vector<std::int64_t> sizes = {4096, 16384, 65536, 262144, 1048576, 4194304};
    std::int64_t chunk_bytes = 65536;
    bool tput = false;
    std::string json;
};

constexpr const char* kUsage =
    "usage: tget_bandwidth_bench [-v SOC | --profile FILE] [--sizes 4096,16384,...] [--chunk-bytes 65536] [--tput] "
    "[--json FILE]\n";

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "tget_bandwidth_bench: " << what << "\n" << kUsage;
    std::exit(2);
}

std::int64_t parse_bytes(const std::string& flag, const std::string& text) {
    try {
        std::size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used != text.size() || v <= 0 || v % 4 != 0) throw std::invalid_argument("");
        return v;
    } catch (const std::exception&) {
        usage_error(fmt::format("{} {}: a positive number of bytes, a multiple of 4 (fp32 elements)", flag, text));
    }
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "-v" || a == "--soc-version") o.soc = value();
        else if (a == "--profile") o.profile_file = value();
        else if (a == "--chunk-bytes") o.chunk_bytes = parse_bytes(a, value());
        else if (a == "--json") o.json = value();
        else if (a == "--tput") o.tput = true;
        else if (a == "--sizes") {
            o.sizes.clear();
            std::stringstream ss(value());
            for (std::string item; std::getline(ss, item, ',');) o.sizes.push_back(parse_bytes("--sizes", item));
            if (o.sizes.empty()) usage_error("--sizes: at least one size");
        } else if (a == "-h" || a == "--help") {
            std::cout << "tget_bandwidth_bench: device time of one block's TGET and TGET_ASYNC (with --tput, also "
                         "TPUT) of each size between two simulated chips\n"
                      << kUsage;
            std::exit(0);
        } else {
            usage_error("unknown argument " + a);
        }
    }
    return o;
}

enum class Transfer { Tget, TgetAsync, Tput };

// Device time of one TGET, TGET_ASYNC or TPUT of `size` bytes between ranks 0 and 1 (rank 0's
// block reads rank 1's window, or writes into it), in microseconds.
double device_us(const Profile& profile, std::int64_t size, std::int64_t chunk_bytes, Transfer transfer) {
    Runtime rt(profile, ClusterOptions{2, DataMode::TimingOnly, false});
    const int row = static_cast<int>(std::min(chunk_bytes, size) / 4);  // fp32 elements per chunk
    // The window of rank 1 (shared: peers may read it) and rank 0's destination.
    GmAllocation* window = nullptr;
    GmAllocation* local = nullptr;
    KernelStats stats;
    rt.run_hosts([&](HostContext& host) {
        GmAllocation& a = host.rank() == 1 ? host.cluster().chip(1).gm.allocate("window", size, true)
                                           : host.malloc("local", size);
        (host.rank() == 1 ? window : local) = &a;
        host.barrier();
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("tget");
        if (transfer == Transfer::TgetAsync) {
            s.launch(KernelLaunch{"TgetAsyncBandwidthKernel", CoreType::AIV, 1, [&, size](BlockCtx& blk) -> Task {
                                      const int n = static_cast<int>(size / 4);
                                      const AsyncEvent done = co_await TGET_ASYNC(
                                          blk, GmTensor(*local, 0, 1, n, n, DType::F32), GmTensor(*window, 0, 1, n, n, DType::F32));
                                      WAIT_ASYNC(blk, done);
                                  }});
            s.synchronize();
            stats = s.kernel_stats().back();
            return;
        }
        // TGET and TPUT: one chunk at a time through the staging tile (TPUT: into the peer's window).
        const bool put = transfer == Transfer::Tput;
        s.launch(KernelLaunch{put ? "TputBandwidthKernel" : "TgetBandwidthKernel", CoreType::AIV, 1,
                              [&, size, row, put](BlockCtx& blk) -> Task {
                                  Tile& ub = blk.alloc_tile(MemKind::UB, 1, row, DType::F32, "stagingTile");
                                  for (std::int64_t off = 0; off < size; off += std::int64_t{row} * 4) {
                                      const int n = static_cast<int>(std::min<std::int64_t>(row, (size - off) / 4));
                                      ub.cols = n;
                                      const GmTensor peer(*window, off, 1, n, n, DType::F32);
                                      const GmTensor mine(*local, off, 1, n, n, DType::F32);
                                      if (put) co_await TPUT(peer, mine, ub);
                                      else co_await TGET(mine, peer, ub);
                                  }
                                  ub.cols = row;
                              }});
        s.synchronize();
        stats = s.kernel_stats().back();
    });
    return to_us(stats.end - stats.start);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        const Profile profile = o.profile_file.empty() ? load_profile_by_soc(o.soc, default_profile_dir())
                                                       : load_profile(o.profile_file);
        nlohmann::json rows = nlohmann::json::array();
        fmt::print("TGET (staging tile {} bytes) and TGET_ASYNC{} of one AIV block between 2 chips of {}, device time\n",
                   o.chunk_bytes, o.tput ? ", then TPUT through the same tile," : "", profile.name);
        fmt::print("{:>10} {:>12} {:>10} {:>14} {:>12}", "bytes", "TGET us", "GB/s", "TGET_ASYNC us", "GB/s");
        if (o.tput) fmt::print(" {:>12} {:>10}", "TPUT us", "GB/s");
        fmt::print("\n");
        const auto gb_s = [](std::int64_t bytes, double us) { return double(bytes) / (us * 1e3); };
        for (std::int64_t size : o.sizes) {
            const double us = device_us(profile, size, o.chunk_bytes, Transfer::Tget);
            const double async_us = device_us(profile, size, o.chunk_bytes, Transfer::TgetAsync);
            fmt::print("{:>10} {:>12.3f} {:>10.3f} {:>14.3f} {:>12.3f}", size, us, gb_s(size, us), async_us,
                       gb_s(size, async_us));
            nlohmann::json row{{"size_bytes", size}, {"tget_device_us", us}, {"tget_async_device_us", async_us}};
            if (o.tput) {
                const double put_us = device_us(profile, size, o.chunk_bytes, Transfer::Tput);
                fmt::print(" {:>12.3f} {:>10.3f}", put_us, gb_s(size, put_us));
                row["tput_device_us"] = put_us;
            }
            fmt::print("\n");
            rows.push_back(row);
        }
        if (!o.json.empty()) {
            std::ofstream f(o.json + ".tmp");
            f << nlohmann::json{{"soc", profile.name}, {"chunk_bytes", o.chunk_bytes}, {"rows", rows}}.dump(2) << "\n";
            f.close();
            if (!f || std::rename((o.json + ".tmp").c_str(), o.json.c_str()) != 0) {
                std::cerr << "tget_bandwidth_bench: cannot write " << o.json << "\n";
                return 1;
            }
        }
    } catch (const SimError& e) {
        std::cerr << "tget_bandwidth_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
