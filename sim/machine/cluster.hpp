#pragma once
// The simulated machine: n chips joined by an interconnect, with the cost model, the
// coordinator that keeps the stream threads deterministic, and delivery of cross-stream writes.
// Knows nothing about any kernel.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "sim/core/cost_model.hpp"
#include "sim/exec/coordinator.hpp"
#include "sim/exec/worker_pool.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/machine/chip.hpp"
#include "sim/net/topology.hpp"
#include "sim/profile.hpp"
#include "sim/sanitize/sanitizer.hpp"

namespace tandem {

enum class DataMode { Functional, TimingOnly };

struct ClusterOptions {
    int ranks = 2;
    DataMode data_mode = DataMode::Functional;
    bool record_log = false;  // keep every instruction (event log / trace)
    bool sanitize = false;    // --sanitize: check synchronisation (sim/sanitize/sanitizer.hpp)
};

class Cluster : public MessageSink {
public:
    Cluster(const Profile& profile, const ClusterOptions& options);

    const Profile& profile() const { return profile_; }
    const CostModel& cost() const { return cost_; }
    const Topology& topology() const { return topology_; }
    const ClusterOptions& options() const { return options_; }
    bool functional() const { return options_.data_mode == DataMode::Functional; }
    int ranks() const { return options_.ranks; }
    Chip& chip(int rank) { return *chips_.at(static_cast<std::size_t>(rank)); }
    Coordinator& coordinator() { return coordinator_; }
    // Host threads for work outside the simulated timeline (deferred products at kernel end).
    WorkerPool& workers() { return workers_; }
    // The sanitizer while sanitizing (a --sanitize run, a sanitized API call), else null.
    Sanitizer* sanitizer() { return sanitizing_; }
    // Turns sanitizing on or off for what is launched next (the API, per call); its state (clocks,
    // flag stamps) is made on the first use and kept while off. Only while no kernel runs.
    void set_sanitizing(bool on);

    // Checks that [address, address+4) is a 4-byte-aligned word inside an allocation of `rank`.
    void check_signal_address(int rank, std::int64_t address) const;
    std::string describe_address(int rank, std::int64_t address) const;

    // MessageSink (called by the coordinator at barriers, single-threaded).
    void deliver(const Message& m, std::uint64_t order) override;
    void fold_before(SimTime horizon) override;

    // Logs handed in by logical processes when their kernels end.
    void append_log(std::vector<InstrRecord>&& records);
    // All records so far in a total order independent of host timing.
    std::vector<InstrRecord> event_log() const;
    // Bandwidth booked on each link (bytes per second, step function), summed over streams.
    std::map<int, std::vector<std::pair<SimTime, std::int64_t>>> link_usage() const;
    void append_link_usage(int link, std::vector<std::pair<SimTime, std::int64_t>>&& steps);
    void clear_log();

private:
    // An atomic-add message's payload added into its destination.
    static void add_elements(const Message& m);

    Profile profile_;
    ClusterOptions options_;
    CostModel cost_;
    Topology topology_;
    std::vector<std::unique_ptr<Chip>> chips_;
    Coordinator coordinator_;
    mutable std::mutex log_mu_;
    std::vector<std::vector<InstrRecord>> logs_;
    std::vector<std::pair<int, std::vector<std::pair<SimTime, std::int64_t>>>> link_usage_;
    std::unique_ptr<Sanitizer> sanitizer_;
    Sanitizer* sanitizing_ = nullptr;  // sanitizer_ while on
    // Last member: destroyed (its threads joined) first.
    WorkerPool workers_;
};

}  // namespace tandem
