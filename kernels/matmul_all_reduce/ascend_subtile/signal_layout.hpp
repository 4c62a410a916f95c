#pragma once
// The newer example's signal matrix: int32 slots in each rank's window, at the same offset on
// every rank, zeroed by the host before every use:
//   slots 0 .. 9               the older version's barrier words (8 per-rank counters, a
//                              broadcast flag, an arrival counter): reserved, never touched;
//   10 .. 10 + T*spt - 1       subtile_ready[l], by owner-local subtile id (sized for one rank:
//                              only the first 2 x ceil(T / n) are used);
//   then Bc x 16 slots         ag_summary[b] at the first int32 of its own 64-byte group.
// The matrix is rounded up to 64 bytes (910 slots -> 3648 B at the default shape).
#include <cstdint>
#include <string>

namespace tandem {
class HostContext;
}

namespace tandem::kernels {

struct SubtileSignalLayout {
    static constexpr int kLegacySlots = 10;        // MAX_RANKS (8) + 2, the older version's barrier
    static constexpr int kSummaryStrideSlots = 16;  // one 64-byte line per summary counter
    static constexpr std::int64_t kAlignBytes = 64;

    SubtileSignalLayout() = default;
    SubtileSignalLayout(int tiles, int subtiles_per_tile, int comm_blocks);

    int ready_slots = 0;  // T * spt
    int comm_blocks = 0;

    int subtile_ready_slot(int l) const { return kLegacySlots + l; }
    int summary_slot(int comm_block) const { return kLegacySlots + ready_slots + kSummaryStrideSlots * comm_block; }
    int slots() const { return summary_slot(comm_blocks); }
    std::int64_t bytes() const;
    // In double: absurd shapes give a message rather than an overflow.
    static double bytes_for(double tiles, double subtiles_per_tile, double comm_blocks);

    // Every slot to 0 (the matrix starts at `base`).
    void host_reset(HostContext& host, std::int64_t base) const;
    // "subtile_ready[5]", "ag_summary[3]", "legacy_barrier[2]", or empty (trace names of signal
    // words; `offset` from the matrix's start).
    std::string name_of(std::int64_t offset) const;
};

}  // namespace tandem::kernels
