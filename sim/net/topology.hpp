#pragma once
// Which directed links join the ranks of a cluster and which links a message crosses.
//
// Link ids are dense (0 .. link_count()-1) so callers can keep one BandwidthCalendar per link
// in a plain vector. Routes are fixed per (src, dst): the model has no adaptive routing.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "sim/profile.hpp"

namespace tandem {

class Topology {
public:
    // The most ranks a cluster may have (message source ids and sanitizer thread keys are sized
    // for it: sim/exec/message.hpp, sim/sanitize/vector_clock.hpp).
    static constexpr int kMaxRanks = 4096;

    struct Link {
        int src;
        int dst;
        int lane;  // which ring of a DoubleRing (0 or 1); always 0 otherwise
    };

    // FullMesh: one link per ordered pair. Ring: each rank linked to both neighbours, one link
    // per direction (n == 2: a single link each way). DoubleRing: two such rings, each with the
    // full link bandwidth. Throws SimError unless 1 <= ranks <= kMaxRanks.
    Topology(TopologyKind kind, int ranks);

    TopologyKind kind() const { return kind_; }
    int ranks() const { return ranks_; }
    int link_count() const { return static_cast<int>(links_.size()); }

    // Throws SimError for an id outside [0, link_count()).
    const Link& link(int id) const;

    // Link ids crossed by a message from src_rank to dst_rank, in hop order. Rings take the
    // shorter direction, clockwise (increasing rank) on a tie; a DoubleRing pair uses lane
    // (src + dst) % 2. O(1): the ids are a slice of a table built once, valid as long as the
    // Topology lives. Throws SimError for ranks out of range or src_rank == dst_rank.
    std::span<const int> route(int src_rank, int dst_rank) const;

    // "link 2->3", or "link 2->3 (ring 1)" on a DoubleRing.
    std::string describe_link(int id) const;

private:
    void build_mesh();
    void build_rings(int lanes);
    int lane_for(int src_rank, int dst_rank) const;
    std::size_t walk_start(int lane, bool clockwise) const;
    void check_route_ranks(int src_rank, int dst_rank) const;

    TopologyKind kind_;
    int ranks_;
    std::vector<Link> links_;
    // Route storage, O(links) rather than O(ranks^2 * hops):
    //  FullMesh: ids 0..L-1 in order; route(s, d) is the single entry of the pair's link.
    //  Rings: per lane, the ids met walking clockwise from rank 0 twice round the ring, then
    //  the same walking counter-clockwise, so every shortest route is a contiguous slice.
    std::vector<int> route_table_;
};

}  // namespace tandem
