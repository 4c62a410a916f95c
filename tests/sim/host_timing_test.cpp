// Where the coordinator cuts its windows must not depend on host thread timing: a stream's GM
// traffic reaches the chip's other streams stamped with the end of the window it was booked in
// (sim/mem/memory_view.hpp), so the cuts are part of the simulated times. Before windows were held
// while a host acts, a host thread that was slow between two launches let the first kernel run
// windows bounded by the host's clock, and the second kernel's loads saw the first's traffic at
// other times: one stream-K tune configuration differed by 0.0004 us between `mpirun -n 2` and
// one process (ctest mpi_sweep, now and then). Here the slow host is made by sleeping: the
// times must be the same however long it sleeps, and no window may open meanwhile.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "sim/runtime/runtime.hpp"
#include "tests/support/tile_loads.hpp"

namespace tandem {
namespace host_timing_test {

struct Outcome {
    std::string times;                 // every kernel's start and end, in ps
    std::uint64_t windows_during_sleep = 0;
};

// One rank: 47 loading blocks on stream "loads" and a one-block probe on stream "probe", then
// `ticks` empty kernels on stream "ticks", launched while the loads run (a launch takes 5 us of
// the host's clock). The host thread sleeps `sleep_ms` of wall time after each launch.
Outcome run(int sleep_ms, int ticks, int host_threads) {
    Runtime rt(test::narrow_l2_profile(), ClusterOptions{1, DataMode::TimingOnly, false, false, host_threads});
    Outcome o;
    rt.run_hosts([&](HostContext& host) {
        GmAllocation& buf = host.malloc("buf", test::kLoadTileBytes * test::kLoadTiles * 49);
        Stream& loads = host.create_stream("loads");
        Stream& probe = host.create_stream("probe");
        Stream& tick = host.create_stream("ticks");
        Coordinator& coord = host.cluster().coordinator();
        const auto slow = [&] {
            const std::uint64_t before = coord.windows();
            std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
            o.windows_during_sleep += coord.windows() - before;
        };
        loads.launch(KernelLaunch{"Loads", CoreType::AIV, 47, test::tile_loader(buf, 1)});
        slow();
        probe.launch(KernelLaunch{"Probe", CoreType::AIV, 1, test::tile_loader(buf, 0)});
        slow();
        for (int i = 0; i < ticks; ++i) {
            tick.launch(KernelLaunch{"Tick", CoreType::AIV, 1, [](BlockCtx&) -> Task { co_return; }});
            slow();
        }
        for (Stream* s : {&loads, &probe, &tick}) s->synchronize();
        for (Stream* s : {&loads, &probe, &tick}) {
            for (const KernelStats& k : s->kernel_stats()) o.times += fmt::format("{} {} {}\n", s->name(), k.start, k.end);
        }
    });
    return o;
}

TEST(HostTiming, NoWindowOpensWhileAHostActs) {
    // The loads kernel joins at once and could run as far as the host's clock lets it; it must
    // wait until the host waits (its synchronize).
    EXPECT_EQ(run(20, 4, 2).windows_during_sleep, 0u);
}

TEST(HostTiming, ASlowHostThreadChangesNoTime) {
    const std::string reference = run(0, 8, 2).times;
    EXPECT_EQ(run(5, 8, 2).times, reference) << "a slow host";
    EXPECT_EQ(run(5, 8, 1).times, reference) << "a slow host, one pool thread";
}

}  // namespace host_timing_test
}  // namespace tandem
