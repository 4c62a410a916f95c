#include "sim/net/topology.hpp"

#include <algorithm>
#include <cstddef>

#include "sim/sim_error.hpp"

namespace tandem {

namespace {

// Links in one ring: both directions to each neighbour, except that with two ranks the two
// neighbours coincide and one link per direction is all there is.
int ring_links_per_lane(int ranks) {
    if (ranks == 1) return 0;
    if (ranks == 2) return 2;
    return 2 * ranks;
}

}  // namespace

Topology::Topology(TopologyKind kind, int ranks) : kind_(kind), ranks_(ranks) {
    if (ranks < 1 || ranks > kMaxRanks) {
        throw SimError("topology: rank count " + std::to_string(ranks) + " is outside [1, " +
                       std::to_string(kMaxRanks) + "]");
    }
    switch (kind) {
        case TopologyKind::FullMesh: build_mesh(); break;
        case TopologyKind::Ring: build_rings(1); break;
        case TopologyKind::DoubleRing: build_rings(2); break;
    }
}

// Link id of (s, d) is s * (n - 1) + (d < s ? d : d - 1): sources in order, self skipped.
void Topology::build_mesh() {
    const int n = ranks_;
    links_.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
    for (int src = 0; src < n; ++src) {
        for (int dst = 0; dst < n; ++dst) {
            if (dst != src) links_.push_back({src, dst, 0});
        }
    }
    route_table_.resize(links_.size());
    for (std::size_t id = 0; id < route_table_.size(); ++id) {
        route_table_[id] = static_cast<int>(id);
    }
}

// Per lane: clockwise links i -> i+1 get ids base + i, counter-clockwise links i -> i-1 get
// base + n + i. The route table block of a lane holds the clockwise walk from rank 0 (2n ids)
// then the counter-clockwise walk from rank 0 (2n ids); going round twice lets any route of up
// to n hops be read without wrapping.
void Topology::build_rings(int lanes) {
    const int n = ranks_;
    const int per_lane = ring_links_per_lane(n);
    links_.reserve(static_cast<std::size_t>(lanes) * static_cast<std::size_t>(per_lane));
    route_table_.assign(walk_start(lanes, true), 0);  // two walks of 2n ids per lane
    for (int lane = 0; lane < lanes; ++lane) {
        if (per_lane == 0) continue;  // a single rank has nobody to talk to
        const int base = lane * per_lane;
        for (int i = 0; i < n; ++i) links_.push_back({i, (i + 1) % n, lane});
        if (n > 2) {
            for (int i = 0; i < n; ++i) links_.push_back({i, (i - 1 + n) % n, lane});
        }
        int* clockwise = &route_table_[walk_start(lane, true)];
        int* counter = &route_table_[walk_start(lane, false)];
        for (int k = 0; k < 2 * n; ++k) {
            clockwise[k] = base + k % n;
            // Position k of the counter-clockwise walk leaves rank (n - k) mod n. With n <= 2
            // the tie rule always picks clockwise, so this block is never read.
            if (n > 2) counter[k] = base + n + (2 * n - k) % n;
        }
    }
}

const Topology::Link& Topology::link(int id) const {
    if (id < 0 || id >= link_count()) {
        throw SimError("topology: link id " + std::to_string(id) + " is outside [0, " +
                       std::to_string(link_count()) + ")");
    }
    return links_[static_cast<std::size_t>(id)];
}

void Topology::check_route_ranks(int src_rank, int dst_rank) const {
    for (int rank : {src_rank, dst_rank}) {
        if (rank < 0 || rank >= ranks_) {
            throw SimError("topology: route " + std::to_string(src_rank) + "->" +
                           std::to_string(dst_rank) + ": rank " + std::to_string(rank) +
                           " is outside [0, " + std::to_string(ranks_) + ")");
        }
    }
    if (src_rank == dst_rank) {
        throw SimError("topology: no route from rank " + std::to_string(src_rank) +
                       " to itself");
    }
}

// Index in route_table_ of a lane's walk from rank 0 in one direction (2n entries each).
std::size_t Topology::walk_start(int lane, bool clockwise) const {
    const auto walk_length = 2 * static_cast<std::size_t>(ranks_);
    return (2 * static_cast<std::size_t>(lane) + (clockwise ? 0 : 1)) * walk_length;
}

// Spreads pairs over the two rings of a DoubleRing by the parity of src + dst.
int Topology::lane_for(int src_rank, int dst_rank) const {
    // The lower rank's parity: neighbour pairs alternate between the two rings, so ring
    // algorithms use both rings' bandwidth, and a rank's two neighbours sit on different rings.
    return kind_ == TopologyKind::DoubleRing ? std::min(src_rank, dst_rank) % 2 : 0;
}

std::span<const int> Topology::route(int src_rank, int dst_rank) const {
    check_route_ranks(src_rank, dst_rank);
    const int n = ranks_;
    if (kind_ == TopologyKind::FullMesh) {
        const int id = src_rank * (n - 1) + (dst_rank < src_rank ? dst_rank : dst_rank - 1);
        return {&route_table_[static_cast<std::size_t>(id)], 1};
    }
    const int clockwise_hops = (dst_rank - src_rank + n) % n;
    const int counter_hops = n - clockwise_hops;
    const int lane = lane_for(src_rank, dst_rank);
    if (clockwise_hops <= counter_hops) {
        const std::size_t first = walk_start(lane, true) + static_cast<std::size_t>(src_rank);
        return {&route_table_[first], static_cast<std::size_t>(clockwise_hops)};
    }
    // The counter-clockwise walk reaches src_rank after (n - src_rank) mod n hops.
    const std::size_t first =
        walk_start(lane, false) + static_cast<std::size_t>((n - src_rank) % n);
    return {&route_table_[first], static_cast<std::size_t>(counter_hops)};
}

std::string Topology::describe_link(int id) const {
    const Link& l = link(id);
    std::string text = "link " + std::to_string(l.src) + "->" + std::to_string(l.dst);
    if (kind_ == TopologyKind::DoubleRing) text += " (ring " + std::to_string(l.lane) + ")";
    return text;
}

}  // namespace tandem
