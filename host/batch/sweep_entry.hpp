#pragma once
// One configuration of a sweep or a tune (a SweepJob: resolved, with its profile) and its outcome
// (a SweepEntry), as the pool runs them and the output files record them.
#include <memory>
#include <string>

#include "host/ops/op_facade.hpp"
#include "host/run/results.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// One configuration to run: resolved by the ops facade (defaults filled, every rule checked).
struct SweepJob {
    int line = 0;        // the row's line in the sweep file (tune: the config's number, from 1)
    std::string origin;  // for messages: "sweep FILE line N" / "tune config N"
    ResolvedRun run;
    std::shared_ptr<const Profile> profile;
    // Host threads its machine may keep busy (RunOutputs::host_threads; 0: every core). The pool
    // sets it to the row's share of the host when it starts the row (sim/host_threads.hpp).
    int host_threads = 0;
};

enum class SweepStatus { Pending, Ok, Failed };

// The outcome of one job.
struct SweepEntry {
    SweepJob job;
    SweepStatus status = SweepStatus::Pending;
    RunResults results;  // when Ok or Failed after running (verification failed)
    bool has_results = false;
    std::string error;   // when Failed
};

}  // namespace tandem::host
