#pragma once
// Shared helpers for the tests: the shipped profile, and running one kernel on one stream.
#include <functional>
#include <string>

#include "sim/isa/isa.hpp"
#include "sim/profile.hpp"
#include "sim/runtime/runtime.hpp"

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

namespace tandem::test {

inline Profile b1_profile() { return load_profile(std::string(TANDEM_SOURCE_DIR) + "/sim/profiles/Ascend910B1.toml"); }

// 20-core chips (Ascend910B3) wired as one double ring (examples/profiles/DoubleRing20.toml):
// what the A3 profiles were before their fabric was corrected, for the tests of the ring
// algorithms and of traffic crossing ring hops.
inline Profile double_ring_profile() {
    return load_profile(std::string(TANDEM_SOURCE_DIR) + "/examples/profiles/DoubleRing20.toml");
}

struct SingleRun {
    KernelStats stats;
    SimTime host_end = 0;
};

// Runs `fn` as one kernel of `blocks` blocks on rank 0's first stream and synchronizes. `type`:
// CoreType::AIC, CoreType::AIV or KernelType::MIX.
inline SingleRun run_one_kernel(Runtime& rt, LaunchCores type, int blocks, KernelFn fn, const std::string& name = "k") {
    SingleRun out;
    rt.run_hosts([&](HostContext& host) {
        if (host.rank() != 0) return;
        Stream& s = host.create_stream("s0");
        s.launch(KernelLaunch{name, type, blocks, fn});
        s.synchronize();
        out.stats = s.kernel_stats().back();
        out.host_end = host.now();
    });
    return out;
}

}  // namespace tandem::test
