#include "sim/mem/cluster_port.hpp"

#include <algorithm>

namespace tandem {

void ClusterPortHolds::add(int source, const PortHold& h) {
    if (h.end <= h.begin || h.bytes <= 0 || h.cluster < 0) return;
    const auto c = static_cast<std::size_t>(h.cluster);
    if (by_cluster_.size() <= c) by_cluster_.resize(c + 1);
    by_cluster_[c].push_back(Entry{source, h});
    ++count_;
}

double ClusterPortHolds::mean_held_bytes(int cluster, SimTime from, SimTime to, int skip_source) const {
    if (cluster < 0 || static_cast<std::size_t>(cluster) >= by_cluster_.size() || to <= from) return 0;
    // Byte-picoseconds in whole numbers, summed in the records' order: the same on any host.
    // (A record holds at most a window of bytes, 2^15 or so, over at most to - from.)
    std::int64_t byte_ps = 0;
    for (const Entry& e : by_cluster_[static_cast<std::size_t>(cluster)]) {
        if (e.source == skip_source) continue;
        const SimTime a = std::max(e.hold.begin, from);
        const SimTime b = std::min(e.hold.end, to);
        if (b > a) byte_ps += e.hold.bytes * (b - a);
    }
    return static_cast<double>(byte_ps) / static_cast<double>(to - from);
}

void ClusterPortHolds::forget_ending_before(SimTime t) {
    for (auto& v : by_cluster_) {
        const auto old = v.size();
        std::erase_if(v, [t](const Entry& e) { return e.hold.end < t; });
        count_ -= old - v.size();
    }
}

}  // namespace tandem
