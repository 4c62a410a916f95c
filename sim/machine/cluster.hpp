#pragma once
// The simulated machine: n chips joined by an interconnect, with the cost model, the
// coordinator that keeps the stream threads deterministic, and delivery of cross-stream writes.
// Knows nothing about any kernel. What its running streams may ask of it is the MachinePort
// (sim/exec/machine_port.hpp) it implements: sim/exec, sim/isa and sim/sanitize never see this
// class (sim/README.md).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "sim/core/cost_model.hpp"
#include "sim/exec/coordinator.hpp"
#include "sim/exec/worker_pool.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/exec/machine_port.hpp"
#include "sim/machine/chip.hpp"
#include "sim/net/link_hub.hpp"
#include "sim/net/topology.hpp"
#include "sim/profile.hpp"
#include "sim/sanitize/sanitizer.hpp"

namespace tandem {

enum class DataMode { Functional, TimingOnly };

struct ClusterOptions {
    int ranks = 2;
    DataMode data_mode = DataMode::Functional;
    bool record_log = false;  // keep every instruction (event log / trace)
    bool sanitize = false;    // check synchronisation (sim/sanitize/sanitizer.hpp)
    // Host threads the machine may keep busy at once: its coordinator's pool (the streams'
    // windows) and its worker pool (deferred products) are each this size. 0: one per host core
    // (sim/host_threads.hpp). Results are the same whatever it is.
    int host_threads = 0;
    // With record_log: keep only these ranks' instructions (empty: every rank's). A trace of
    // rank 0 of 8 then holds an eighth of the records in memory. The links' and the memory
    // system's usage are kept for every rank whatever it says: a kept rank's counters include
    // what other ranks' streams booked on its links and stored into its memory.
    std::vector<int> log_ranks{};
};

class Cluster final : public MachinePort, public MessageSink {
public:
    Cluster(const Profile& profile, const ClusterOptions& options);

    // MachinePort
    const Profile& profile() const override { return profile_; }
    const CostModel& cost() const override { return cost_; }
    const Topology& topology() const override { return topology_; }
    int ranks() const override { return options_.ranks; }
    // ClusterOptions::host_threads resolved: the size of each of the machine's thread pools.
    int host_threads() const { return host_threads_; }
    bool functional() const override { return options_.data_mode == DataMode::Functional; }
    bool record_log() const override { return options_.record_log; }
    bool record_instructions_of(int rank) const override;
    std::span<const ChipParts> chips() const override { return chip_parts_; }
    Coordinator& coordinator() override { return coordinator_; }
    // The sanitizer while sanitizing (a --sanitize run, a sanitized API call), else null.
    Sanitizer* sanitizer() override { return sanitizing_; }
    // On the worker pool (sim/isa/deferred_drain.hpp).
    void complete_deferred_writes(const std::vector<std::shared_ptr<PendingGmWrite>>& writes) override;
    // Logs handed in by logical processes when their kernels end.
    void append_log(std::vector<InstrRecord>&& records) override;
    void append_link_usage(int link, LinkSteps&& steps) override;
    LinkHub& link_hub(int link) override;
    void append_memory_usage(int rank, std::vector<MemBinBytes>&& bins) override;

    const ClusterOptions& options() const { return options_; }
    Chip& chip(int rank) { return *chips_.at(static_cast<std::size_t>(rank)); }
    // Turns sanitizing on or off for what is launched next (the API, per call); its state (clocks,
    // flag stamps) is made on the first use and kept while off. Only while no kernel runs.
    void set_sanitizing(bool on);
    // Turns the log (ClusterOptions::record_log) on or off for the kernels launched next,
    // keeping only `ranks`' instructions (empty: every rank's): the API logs a traced call only.
    // Only while no kernel runs; each stream reads it when its next kernel starts.
    void set_logging(bool on, std::vector<int> ranks = {});

    // MessageSink (called by the coordinator at barriers, single-threaded).
    void deliver(const Message& m, std::uint64_t order) override;
    void fold_before(SimTime horizon) override;

    // All records so far in a total order independent of host timing.
    std::vector<InstrRecord> event_log() const;
    // Bandwidth booked on each link (bytes per second, step function), summed over streams.
    std::map<int, LinkSteps> link_usage() const;
    // Bytes through each chip's L2 and HBM per usage bin, summed over the streams (by rank; bins
    // in increasing order, only those with traffic).
    std::map<int, std::vector<MemBinBytes>> memory_usage() const;
    void clear_log();

private:
    // An atomic-add message's payload added into its destination.
    static void add_elements(const Message& m);

    Profile profile_;
    ClusterOptions options_;
    int host_threads_;
    CostModel cost_;
    Topology topology_;
    std::vector<std::unique_ptr<Chip>> chips_;
    std::vector<ChipParts> chip_parts_;  // chips_ as the port shows them
    Coordinator coordinator_;
    // The links' hubs, made when a stream first sends over the link (a full mesh of hundreds of
    // ranks has 10^5 links, most never used by a run).
    std::mutex hubs_mu_;
    std::vector<std::unique_ptr<LinkHub>> link_hubs_;
    LinkHub& hub_locked(int link);  // made on first use; hubs_mu_ held
    // The links are visited a few per barrier, in turn, for their hubs to forget their past: a
    // hub forgets when usage is delivered to it, and a comm stream that has moved on to other
    // peers delivers to its old links no more.
    std::size_t next_hub_to_forget_ = 0;
    // The last barrier's (fold_before): written at barriers, read by the hubs in windows too
    // (LinkHub::first_usage bins from it).
    std::atomic<SimTime> horizon_{0};
    // The chips' cluster-port records are forgotten every kPortForgetBarriers-th barrier, not at
    // each: a record that could have gone adds nothing to any later read (it ends before every
    // read's sample starts), and each pass walks every record, millions when AIVs book their
    // remote reads long ahead (6% of matmul_all_reduce one_shot's samples at 64 ranks).
    static constexpr int kPortForgetBarriers = 16;
    int barriers_to_port_forget_ = 0;
    mutable std::mutex log_mu_;
    std::vector<std::vector<InstrRecord>> logs_;
    std::vector<std::pair<int, LinkSteps>> link_usage_;
    std::vector<std::pair<int, std::vector<MemBinBytes>>> memory_usage_;
    std::unique_ptr<Sanitizer> sanitizer_;
    Sanitizer* sanitizing_ = nullptr;  // sanitizer_ while on
    // Last member: destroyed (its threads joined) first.
    WorkerPool workers_;
};

}  // namespace tandem
