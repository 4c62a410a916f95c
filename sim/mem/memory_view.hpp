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
#include <memory>
#include <string>
#include <vector>

#include "sim/mem/chip_memory.hpp"
#include "sim/mem/gm_tensor.hpp"
#include "sim/mem/read_requests.hpp"
#include "sim/mem/traffic_pool.hpp"
#include "sim/mem/usage_runs.hpp"
#include "sim/net/binned_calendar.hpp"

namespace tandem {

enum class MemAccess : std::uint8_t { Read, Write, AtomicAdd };

class MemoryView {
public:
    MemoryView(ChipMemory& own, int rank, int source, std::int64_t l2_bytes_per_s, std::int64_t hbm_bytes_per_s);

    // A move of `bytes` between `g` (this chip's GM) and a core, issued at `issue`, starting at
    // `start`, at most `cap_bytes_per_s` for the core and, for a read, what its core's requests
    // in flight give it (`requests`: its part that misses the L2 waits for HBM's latency too).
    // Returns when its last byte has moved.
    SimTime book_local(const GmTensor& g, MemAccess access, SimTime issue, SimTime start, double bytes,
                       std::int64_t cap_bytes_per_s, const ReadRequests& requests = {});

    // A peer's memory used by a transfer through the interconnect: a remote store or atomic add
    // landing in `g` over [start, end), or a remote load reading it. `peer` is g's chip.
    void note_remote(ChipMemory& peer, const GmTensor& g, MemAccess access, SimTime issue, SimTime start, SimTime end,
                     double bytes);

    ~MemoryView();
    MemoryView(const MemoryView&) = delete;
    MemoryView& operator=(const MemoryView&) = delete;

    // A new kernel on this stream: fresh calendars (nothing of the last one is still moving).
    void begin_kernel();
    // No booking from now on starts before `horizon`.
    void forget_before(SimTime horizon);

    // The kernel's last window: until the next kernel's first booking, the chip need not keep
    // records for this view.
    void end_kernel();

    // ---- read by the chip when it applies a barrier (ChipMemory::sync, chip_memory.hpp) ----
    // Whether the view is in a kernel that has booked, and the first record it has not looked at.
    bool running() const { return running_; }
    std::uint64_t next_record() const { return next_usage_; }

    // The traffic produced since the last call, one record per chip it touched, in rank order:
    // the caller sends each to its chip. Replaces what `out` held.
    struct ChipTraffic {
        int rank = 0;
        std::shared_ptr<const MemTraffic> traffic;
    };
    void take_traffic(std::vector<ChipTraffic>& out);

    // For statistics and tests.
    const BinnedCalendar& l2() const { return *l2_; }
    const BinnedCalendar& hbm() const { return *hbm_; }
    // The usage beside this stream's own bookings (the other producers', its write-backs).
    UsageSum others_l2() const;
    UsageSum others_hbm() const;
    double hbm_read_bytes() const { return hbm_read_bytes_; }
    double l2_hit_bytes() const { return l2_hit_bytes_; }

private:
    // Fresh calendars whose bins are counted from `origin` (the kernel's first booking).
    void anchor_calendars(SimTime origin);
    // Adds the other producers' usage published at or before t.
    void catch_up(SimTime t);
    // Adds the other producers' records from next_usage_ up to `end` published at or before t.
    void add_others(std::uint64_t end, SimTime t);
    // Of a read of `g` at time t: its bytes in the cells of regions resident then (own touches of
    // this window count at once). Touches the cells it covers.
    double resident_bytes(const ChipMemory& chip, const GmTensor& g, double bytes, SimTime t, bool own);
    // Records part of a region touched: an own one not all touched in this window, or a peer's.
    // `resident`: all of the part was resident already.
    void touch(MemTraffic& traffic, std::int64_t region, const RegionPart& part, bool own, bool resident);
    // The cells of an own region touched in this window (cells nullptr: none).
    CellsView touched_this_window(std::int64_t region) const {
        const auto r = static_cast<std::size_t>(region);
        if (r >= own_touched_.size() || own_touched_[r].window != window_number_) return CellsView{};
        return CellsView{&own_touched_[r].cells, own_touched_[r].whole};
    }
    MemTraffic& traffic_for(int rank);
    // Adds usage to what is published for `rank`'s chip, spread over fixed bins of time: the
    // other streams then add a few steps per window instead of every transfer's own.
    void publish(int rank, const MemUsage& u);

    ChipMemory& own_;
    int rank_;
    int source_;
    // This stream's own bookings, and the usage it did not book (the other producers', its own
    // write-backs) in bins, read beside them (others_l2(), others_hbm()).
    std::unique_ptr<BinnedCalendar> l2_;
    std::unique_ptr<BinnedCalendar> hbm_;
    bool anchored_ = false;  // the calendars belong to the running kernel (anchor_calendars())
    UsageBins others_;
    std::uint64_t next_usage_ = 0;  // the first published record not yet looked at
    bool running_ = false;          // set by the kernel's first booking, cleared by end_kernel()
    // This window's record per chip touched (indexed by rank; null: none yet), and those ranks.
    std::shared_ptr<TrafficPool> pool_ = TrafficPool::make();
    std::vector<std::shared_ptr<MemTraffic>> traffic_;
    std::vector<int> traffic_ranks_;
    // What this window publishes for its own chip, in bins (sim/mem/usage_runs.hpp).
    UsageBins own_bins_;
    bool own_published_ = false;
    // What turning a peer's usages into runs works in (one for every peer: its room is kept
    // once), and the peers published to.
    UsageRunsScratch runs_scratch_;
    std::vector<int> peers_published_;
    // Own chip's regions touched this window: region r's cells own_touched_[r].cells were when
    // own_touched_[r].window is the window's number (region ids are dense from the first GM
    // allocation; a lookup is on every load).
    struct WindowTouch {
        std::uint32_t window = 0;
        bool whole = false;
        RegionCells cells{};
    };
    std::vector<WindowTouch> own_touched_;
    std::uint32_t window_number_ = 1;
    double hbm_read_bytes_ = 0;
    double l2_hit_bytes_ = 0;
};

}  // namespace tandem
