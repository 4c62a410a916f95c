#pragma once
// One stream's view of the memory systems it touches (sim/mem/chip_memory.hpp): the calendars it
// books its own chip's GM traffic on (L2 and HBM), the usage of the chip's other producers added
// as its clock reaches their publication time, and the traffic it produced in the current window
// (for its own chip and for the peers it wrote into or read from), handed in at the barrier.
//
// A transfer's bytes all go through the L2. A read's bytes in regions that were not resident
// also come from HBM; a write lands in the L2 and is written back to HBM later, which takes HBM
// bandwidth but does not hold the store up; an atomic add reads and writes its bytes in the L2
// (twice the L2 bytes, at the same rate for the core).
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/gm_tensor.hpp"
#include "sim/net/bandwidth_calendar.hpp"

namespace tandem {

enum class MemAccess : std::uint8_t { Read, Write, AtomicAdd };

class MemoryView {
public:
    MemoryView(ChipMemory& own, int rank, int source, std::int64_t l2_bytes_per_s, std::int64_t hbm_bytes_per_s);

    // A move of `bytes` between `g` (this chip's GM) and a core, issued at `issue`, starting at
    // `start`, at most `cap_bytes_per_s` for the core. Returns when its last byte has moved.
    SimTime book_local(const GmTensor& g, MemAccess access, SimTime issue, SimTime start, double bytes,
                       std::int64_t cap_bytes_per_s);

    // A peer's memory used by a transfer through the interconnect: a remote store or atomic add
    // landing in `g` over [start, end), or a remote load reading it. `peer` is g's chip.
    void note_remote(ChipMemory& peer, const GmTensor& g, MemAccess access, SimTime issue, SimTime start, SimTime end,
                     double bytes);

    // A new kernel on this stream: fresh calendars (nothing of the last one is still moving).
    void begin_kernel();
    // No booking from now on starts before `horizon`.
    void forget_before(SimTime horizon);

    // The traffic produced since the last call, one entry per chip it touched (in rank order);
    // the caller sends each to its chip. Clears it.
    std::map<int, MemTraffic> take_traffic();

    // For statistics and tests.
    const BandwidthCalendar& l2() const { return *l2_; }
    const BandwidthCalendar& hbm() const { return *hbm_; }
    double hbm_read_bytes() const { return hbm_read_bytes_; }
    double l2_hit_bytes() const { return l2_hit_bytes_; }

private:
    // Adds the other producers' usage published at or before t.
    void catch_up(SimTime t);
    // Of a read of `g` at time t: its bytes in regions resident then (own touches of this window
    // count at once). Touches the regions.
    double resident_bytes(const ChipMemory& chip, const GmTensor& g, double bytes, SimTime t, bool own);
    void touch(MemTraffic& traffic, std::int64_t region, bool own);
    MemTraffic& traffic_for(int rank);

    ChipMemory& own_;
    int rank_;
    int source_;
    std::unique_ptr<BandwidthCalendar> l2_;
    std::unique_ptr<BandwidthCalendar> hbm_;
    std::uint64_t next_usage_ = 0;  // the first published usage not yet looked at
    std::map<int, MemTraffic> traffic_;
    std::unordered_set<std::int64_t> own_touched_;  // own chip's regions touched this window
    double hbm_read_bytes_ = 0;
    double l2_hit_bytes_ = 0;
};

}  // namespace tandem
