#pragma once
// Which block of a GEMM kernel computes which part of which output tile: the schedule every op's
// GEMM part shares (--schedule). A block's work is a list of segments (tile, K panels
// [k_begin, k_end)); a pure function of (schedule, tiles, K panels, blocks), computed alike by the
// host and by every block.
//   data_parallel  whole tiles: block b takes tiles b, b + blocks, ... (Iris's persistent order).
//                  A partial last wave leaves blocks idle.
//   stream_k       the tiles x k_panels K iterations, in tile-major order, cut into `blocks`
//                  contiguous ranges of equal length (within one); a block's range starts and
//                  ends mid-tile, so a tile may be split over several blocks (Stream-K,
//                  Osama et al. 2023). Every wave is full; split tiles need a fix-up.
//   hybrid         the full waves data-parallel (tiles 0 .. floor(tiles / blocks) * blocks), the
//                  remaining tiles stream-K over all the blocks (CUTLASS's "DP + SK"): the
//                  fix-ups are confined to the last wave.
//
// A tile split over several blocks has one segment per block. Each contributing segment stores
// its fp32 partial accumulator into its own slot of a partials buffer (partial_slot) and sets the
// slot's flag; the fix-up of the tile waits for the contributors(t) flags of its slots, sums the slots in segment order (so the bits do not depend on timing) and then the tile is
// complete: the fix-up belongs to the block computing the tile's last K segment
// (kernels/common/stream_k_gemm.hpp says where the add runs, and why).
#include <string>
#include <vector>

namespace tandem::kernels {

enum class GemmScheduleKind { DataParallel, StreamK, Hybrid };

// "data_parallel" | "stream_k" | "hybrid"; anything else throws SimError.
GemmScheduleKind parse_gemm_schedule(const std::string& name);
const char* gemm_schedule_name(GemmScheduleKind kind);
// What every op whose GEMM part uses this schedule offers (--schedule).
const std::vector<std::string>& gemm_schedule_names();

struct GemmSegment {
    int tile = 0;
    int k_begin = 0;  // first K panel
    int k_end = 0;    // one past the last K panel
    bool operator==(const GemmSegment&) const = default;
};

class GemmSchedule {
public:
    GemmSchedule(GemmScheduleKind kind, int tiles, int k_panels, int blocks);

    GemmScheduleKind kind() const { return kind_; }
    int tiles() const { return tiles_; }
    int k_panels() const { return k_panels_; }
    int blocks() const { return blocks_; }

    // Block b's segments, in the order it computes them.
    const std::vector<GemmSegment>& segments(int block) const { return segments_[static_cast<std::size_t>(block)]; }
    // Blocks contributing to tile t (1: computed whole by one block, no fix-up).
    int contributors(int tile) const { return contributors_[static_cast<std::size_t>(tile)]; }
    bool split(int tile) const { return contributors(tile) > 1; }
    // Slot in the partials buffer of block b's segment i (-1 when the tile is not split); the
    // slots of a split tile are consecutive, from first_slot(t), in K order.
    int partial_slot(int block, int i) const { return slots_[static_cast<std::size_t>(block)][static_cast<std::size_t>(i)]; }
    int first_slot(int tile) const { return first_slot_[static_cast<std::size_t>(tile)]; }
    int partial_slots() const { return partial_slots_; }
    // Whether block b's segment i finishes its tile (covers its last K panel): the one whose
    // block does the tile's fix-up (when split) and its epilogue.
    bool finishes_tile(int block, int i) const { return segments(block)[static_cast<std::size_t>(i)].k_end == k_panels_; }

private:
    GemmScheduleKind kind_;
    int tiles_;
    int k_panels_;
    int blocks_;
    std::vector<std::vector<GemmSegment>> segments_;
    std::vector<std::vector<int>> slots_;
    std::vector<int> contributors_;
    std::vector<int> first_slot_;
    int partial_slots_ = 0;
};

// The number of partial slots a schedule needs (for workspace sizing, without building it all).
int gemm_partial_slots(GemmScheduleKind kind, int tiles, int k_panels, int blocks);

}  // namespace tandem::kernels
