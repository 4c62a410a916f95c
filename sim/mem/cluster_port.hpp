#pragma once
// A core cluster's port to its chip's memory system (an AIC with its two AIVs: AIC c with AIV 2c
// and 2c + 1), as the cluster's cores share it: an AIV's remote read holds some of the port's
// request slots for its round trip, and its AIC's GM -> L1 loads get what is left
// (sim/MODEL.md "A cluster's port").
//
// What an AIV holds is a record (cluster, from, to, bytes), not a rate per nanosecond. A stream
// keeps its own records as its blocks book them (they run in (time, slot) order, so its AIC reads
// exactly the records of its AIVs that were booked before its load's issue), and hands them in at
// the window's barrier; the chip keeps every stream's records, stamped with that barrier, and a
// stream reads the other streams' only from there. So what one stream's reads do to another
// stream's loads is a pure function of simulated time, whatever the host threads do.
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/sim_time.hpp"

namespace tandem {

// Bytes one AIV of `cluster` holds of the cluster's port over [begin, end).
struct PortHold {
    std::int32_t cluster = 0;
    SimTime begin = 0;
    SimTime end = 0;
    std::int64_t bytes = 0;
};

// What one stream's AIVs held in one window, handed in at its barrier (Message::Kind::PortTraffic).
struct PortTraffic {
    std::vector<PortHold> holds;
};

// Records of one chip's clusters, by cluster, each with the producer that made it (a logical
// process's source id), kept while a reader can still look at them.
class ClusterPortHolds {
public:
    void add(int source, const PortHold& h);
    // The bytes cluster `cluster` held on average over [from, to) (from < to), counting the
    // records of every producer but `skip_source` (-1: none).
    double mean_held_bytes(int cluster, SimTime from, SimTime to, int skip_source = -1) const;
    // Drops the records that end before t (no reader looks before t again).
    void forget_ending_before(SimTime t);
    void clear();
    bool empty() const { return count_ == 0; }
    // The records kept (runs of holds, below).
    std::size_t size() const { return count_; }

private:
    // Records as kept: one AIV's reads in a stream run back to back at a steady pace (a one-shot
    // all-reduce's AIVs book thousands, long ahead, and a chip kept millions at 64 ranks), so a
    // record is a run of `count` holds of one span's length, each `period` after the last. A
    // mean counts byte-picoseconds hold by hold, so a run counts what its holds would apart.
    // 32 bytes: a hold's span and a run's period fit 32 bits of picoseconds (2.1 ms); a longer
    // hold is kept as pieces, which count the same.
    struct Run {
        SimTime begin;          // the first hold's start
        std::uint32_t length;   // each hold's span
        std::uint32_t period;   // from one hold's start to the next (> 0 once count > 1)
        std::int32_t count;
        std::int32_t bytes;
        std::int32_t source;
        SimTime end() const { return begin + static_cast<SimTime>(count - 1) * period + length; }
        // The byte-picoseconds its holds keep in [from, to).
        std::int64_t byte_ps_within(SimTime from, SimTime to) const;
        // Whether a hold of `source` over [b, b + len) with `bytes` continues the run (and then
        // joins it).
        bool extend(std::int32_t s, SimTime b, std::uint32_t len, std::int32_t by) {
            if (s != source || len != length || by != bytes) return false;
            if (count == 1) {
                if (b <= begin || b - begin > std::numeric_limits<std::uint32_t>::max()) return false;
                period = static_cast<std::uint32_t>(b - begin);
            } else if (b != begin + static_cast<SimTime>(count) * period || count == std::numeric_limits<std::int32_t>::max()) {
                return false;
            }
            ++count;
            return true;
        }
    };
    static_assert(sizeof(Run) == 32);
    // How many of a cluster's latest runs a new hold may join: its two AIVs interleave theirs,
    // and a few streams may share the chip.
    static constexpr std::size_t kJoinLookBack = 8;
    std::vector<std::vector<Run>> by_cluster_;
    std::size_t count_ = 0;
};

}  // namespace tandem
