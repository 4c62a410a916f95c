#include "sim/mem/cluster_port.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "sim/sim_error.hpp"

namespace tandem {

void ClusterPortHolds::add(int source, const PortHold& h) {
    if (h.end <= h.begin || h.bytes <= 0 || h.cluster < 0) return;
    if (h.bytes > std::numeric_limits<std::int32_t>::max()) {
        throw SimError("cluster port: a hold of " + std::to_string(h.bytes) + " bytes on cluster " +
                       std::to_string(h.cluster) + " (at most 2^31 - 1 are kept)");
    }
    const auto c = static_cast<std::size_t>(h.cluster);
    if (by_cluster_.size() <= c) by_cluster_.resize(c + 1);
    by_cluster_[c].push_back(Entry{h.begin, h.end, static_cast<std::int32_t>(h.bytes), source});
    ++count_;
}

double ClusterPortHolds::mean_held_bytes(int cluster, SimTime from, SimTime to, int skip_source) const {
    if (cluster < 0 || static_cast<std::size_t>(cluster) >= by_cluster_.size() || to <= from) return 0;
    // Byte-picoseconds in whole numbers, summed in the records' order: the same on any host.
    // (A record holds at most a window of bytes, 2^15 or so, over at most to - from.)
    std::int64_t byte_ps = 0;
    for (const Entry& e : by_cluster_[static_cast<std::size_t>(cluster)]) {
        if (e.source == skip_source) continue;
        const SimTime a = std::max(e.begin, from);
        const SimTime b = std::min(e.end, to);
        if (b > a) byte_ps += std::int64_t{e.bytes} * (b - a);
    }
    return static_cast<double>(byte_ps) / static_cast<double>(to - from);
}

void ClusterPortHolds::forget_ending_before(SimTime t) {
    for (auto& v : by_cluster_) {
        const auto old = v.size();
        std::erase_if(v, [t](const Entry& e) { return e.end < t; });
        count_ -= old - v.size();
    }
}

}  // namespace tandem
