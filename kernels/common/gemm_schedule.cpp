#include "kernels/common/gemm_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "sim/sim_error.hpp"

namespace tandem::kernels {

GemmScheduleKind parse_gemm_schedule(const std::string& name) {
    if (name == "data_parallel") return GemmScheduleKind::DataParallel;
    if (name == "stream_k") return GemmScheduleKind::StreamK;
    if (name == "hybrid") return GemmScheduleKind::Hybrid;
    throw SimError(fmt::format("GEMM schedule '{}': not one of data_parallel, stream_k, hybrid", name));
}

const char* gemm_schedule_name(GemmScheduleKind kind) {
    switch (kind) {
        case GemmScheduleKind::DataParallel: return "data_parallel";
        case GemmScheduleKind::StreamK: return "stream_k";
        case GemmScheduleKind::Hybrid: return "hybrid";
    }
    return "?";
}

const std::vector<std::string>& gemm_schedule_names() {
    static const std::vector<std::string> names = {"data_parallel", "stream_k", "hybrid"};
    return names;
}

GemmSchedule::GemmSchedule(GemmScheduleKind kind, int tiles, int k_panels, int blocks)
    : kind_(kind), tiles_(tiles), k_panels_(k_panels), blocks_(blocks),
      segments_(static_cast<std::size_t>(blocks > 0 ? blocks : 0)), slots_(segments_.size()),
      contributors_(static_cast<std::size_t>(tiles > 0 ? tiles : 0), 0),
      first_slot_(contributors_.size(), -1) {
    if (tiles < 0 || k_panels < 1 || blocks < 1) {
        throw SimError(fmt::format("GEMM schedule {}: {} tiles of {} K panels on {} blocks (need tiles >= 0, "
                                   "K panels >= 1, blocks >= 1)", gemm_schedule_name(kind), tiles, k_panels, blocks));
    }
    // Tiles [0, dp_tiles) whole and data-parallel; [dp_tiles, tiles) stream-K.
    int dp_tiles = 0;
    if (kind == GemmScheduleKind::DataParallel) dp_tiles = tiles;
    if (kind == GemmScheduleKind::Hybrid) dp_tiles = tiles / blocks * blocks;
    for (int b = 0; b < blocks; ++b)
        for (int t = b; t < dp_tiles; t += blocks) segments_[static_cast<std::size_t>(b)].push_back({t, 0, k_panels});
    // The stream-K iterations, evenly: block b gets [b * total / blocks, (b + 1) * total / blocks).
    const std::int64_t total = std::int64_t{tiles - dp_tiles} * k_panels;
    for (int b = 0; b < blocks; ++b) {
        std::int64_t it = total * b / blocks;
        const std::int64_t end = total * (b + 1) / blocks;
        while (it < end) {
            const int t = dp_tiles + static_cast<int>(it / k_panels);
            const int kb = static_cast<int>(it % k_panels);
            const int ke = static_cast<int>(std::min<std::int64_t>(k_panels, kb + (end - it)));
            segments_[static_cast<std::size_t>(b)].push_back({t, kb, ke});
            it += ke - kb;
        }
    }
    for (const auto& segs : segments_)
        for (const GemmSegment& s : segs) ++contributors_[static_cast<std::size_t>(s.tile)];
    // Slots of split tiles in tile order, and within a tile in K order (= block order, as the
    // stream-K ranges are increasing in the block index).
    for (int t = 0; t < tiles; ++t) {
        if (contributors_[static_cast<std::size_t>(t)] > 1) {
            first_slot_[static_cast<std::size_t>(t)] = partial_slots_;
            partial_slots_ += contributors_[static_cast<std::size_t>(t)];
        }
    }
    std::vector<int> next(contributors_.size(), 0);
    for (int b = 0; b < blocks; ++b) {
        for (const GemmSegment& s : segments_[static_cast<std::size_t>(b)]) {
            const int first = first_slot_[static_cast<std::size_t>(s.tile)];
            slots_[static_cast<std::size_t>(b)].push_back(first < 0 ? -1 : first + next[static_cast<std::size_t>(s.tile)]++);
        }
    }
}

int gemm_partial_slots(GemmScheduleKind kind, int tiles, int k_panels, int blocks) {
    return GemmSchedule(kind, tiles, k_panels, blocks).partial_slots();
}

}  // namespace tandem::kernels
