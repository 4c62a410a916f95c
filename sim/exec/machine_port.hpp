#pragma once
// The machine as a running stream sees it: everything a logical process, its blocks' instructions
// (sim/isa) and its sanitizer hooks need from the simulated machine, and nothing else. The
// machine (sim/machine/cluster.hpp) implements it; sim/exec and sim/isa know only this interface,
// so the machine may include them and never the other way round (sim/README.md).
//
// The accessors are called when a logical process is made and when a kernel starts or ends, not
// per instruction: a logical process keeps what its hot path reads (the cost model, the
// coordinator, the chips' table) in its own members, so no instruction pays a virtual call.
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "sim/exec/instr_record.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct Profile;
struct CostModel;
class Topology;
class Coordinator;
class Sanitizer;
class GlobalMemory;
class ChipMemory;
class ClusterPortHolds;
class LinkHub;
class SignalStore;
class PendingGmWrite;

// The parts of one chip that streams touch: its GM (allocations, bounds, data), its memory
// system (L2 and HBM bandwidth, sim/mem/chip_memory.hpp), its signal words and its clusters' ports.
struct ChipParts {
    GlobalMemory* gm = nullptr;
    ChipMemory* memory = nullptr;
    SignalStore* signals = nullptr;
    const ClusterPortHolds* ports = nullptr;  // the clusters' ports as delivered (sim/mem/cluster_port.hpp)
};

// Bandwidth booked on one link as a step function: (from this time on, bytes per second).
using LinkSteps = std::vector<std::pair<SimTime, std::int64_t>>;

// Bytes one chip's memory moved in one usage bin (sim/mem/chip_memory.hpp kMemUsageBinPs),
// through its L2 and to or from its HBM, rounded to whole bytes so that the streams' shares add
// up the same in any order.
struct MemBinBytes {
    std::int64_t bin = 0;
    std::int64_t l2_bytes = 0;
    std::int64_t hbm_bytes = 0;
};

class MachinePort {
public:
    virtual ~MachinePort() = default;

    // ---- what the machine is (fixed for its life) ----
    virtual const Profile& profile() const = 0;
    virtual const CostModel& cost() const = 0;
    virtual const Topology& topology() const = 0;
    virtual int ranks() const = 0;
    // Do the chips' GMs hold data (functional), or only their bookkeeping (timing-only)?
    virtual bool functional() const = 0;
    // Keep every instruction (the event log behind traces and tests)?
    virtual bool record_log() const = 0;
    // Keep rank `rank`'s instructions in that log? (record_log, and the rank asked for.)
    virtual bool record_instructions_of(int rank) const = 0;
    // Every rank's chip, by rank; the span and what it points to live as long as the machine.
    virtual std::span<const ChipParts> chips() const = 0;

    // ---- shared machinery ----
    virtual Coordinator& coordinator() = 0;
    // The sanitizer while the machine sanitizes (a --sanitize run, a sanitized API call), else null.
    virtual Sanitizer* sanitizer() = 0;
    // How every stream shares directed link `link` (sim/net/link_hub.hpp); it lives as long as
    // the machine. Thread-safe: a stream asks at its kernel's first booking of the link.
    virtual LinkHub& link_hub(int link) = 0;
    // Completes a finished kernel's deferred writes (the functional cube's products,
    // sim/mem/gm_deferred.hpp) on the machine's host worker threads; throws SimError if one fails.
    virtual void complete_deferred_writes(const std::vector<std::shared_ptr<PendingGmWrite>>& writes) = 0;

    // ---- what a kernel hands in as it ends (thread-safe) ----
    virtual void append_log(std::vector<InstrRecord>&& records) = 0;
    virtual void append_link_usage(int link, LinkSteps&& steps) = 0;
    // What the kernel's stream moved through `rank`'s memory (its own chip's, or a peer's it
    // stored into), by bin in increasing order.
    virtual void append_memory_usage(int rank, std::vector<MemBinBytes>&& bins) = 0;
};

}  // namespace tandem
