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
    std::vector<Run>& runs = by_cluster_[c];
    const auto bytes = static_cast<std::int32_t>(h.bytes);
    constexpr SimTime kLongest = std::numeric_limits<std::uint32_t>::max();
    for (SimTime begin = h.begin; begin < h.end; begin += kLongest) {
        const auto length = static_cast<std::uint32_t>(std::min(h.end - begin, kLongest));
        const std::size_t look = std::min(runs.size(), kJoinLookBack);
        bool joined = false;
        for (std::size_t i = 1; i <= look && !joined; ++i) joined = runs[runs.size() - i].extend(source, begin, length, bytes);
        if (!joined) {
            runs.push_back(Run{begin, length, 0, 1, bytes, source});
            ++count_;
        }
    }
}

std::int64_t ClusterPortHolds::Run::byte_ps_within(SimTime from, SimTime to) const {
    // Holds k = first .. last overlap [from, to): start + length > from and start < to.
    if (begin >= to || end() <= from) return 0;
    std::int64_t first = 0;
    std::int64_t last = count - 1;
    if (count > 1) {
        const auto p = static_cast<SimTime>(period);
        if (begin + static_cast<SimTime>(length) <= from) first = (from - static_cast<SimTime>(length) - begin) / p + 1;
        last = std::min<std::int64_t>(last, (to - 1 - begin) / p);
    }
    std::int64_t byte_ps = 0;
    for (std::int64_t k = first; k <= last; ++k) {
        const SimTime start = begin + k * static_cast<SimTime>(period);
        const SimTime a = std::max(start, from);
        const SimTime z = std::min(start + static_cast<SimTime>(length), to);
        if (z > a) byte_ps += std::int64_t{bytes} * (z - a);
    }
    return byte_ps;
}

double ClusterPortHolds::mean_held_bytes(int cluster, SimTime from, SimTime to, int skip_source) const {
    if (cluster < 0 || static_cast<std::size_t>(cluster) >= by_cluster_.size() || to <= from) return 0;
    // Byte-picoseconds in whole numbers, summed in the records' order: the same on any host.
    // (A record holds at most a window of bytes, 2^15 or so, over at most to - from.)
    std::int64_t byte_ps = 0;
    for (const Run& r : by_cluster_[static_cast<std::size_t>(cluster)]) {
        if (r.source != skip_source) byte_ps += r.byte_ps_within(from, to);
    }
    return static_cast<double>(byte_ps) / static_cast<double>(to - from);
}

void ClusterPortHolds::forget_ending_before(SimTime t) {
    for (auto& v : by_cluster_) {
        const auto old = v.size();
        std::erase_if(v, [t](const Run& r) { return r.end() < t; });
        count_ -= old - v.size();
    }
}

void ClusterPortHolds::clear() {
    for (auto& v : by_cluster_) v.clear();
    count_ = 0;
}

}  // namespace tandem
