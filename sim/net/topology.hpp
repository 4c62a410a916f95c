#pragma once
// The cluster's fabric: which resources (links, switch ports, package links, NICs) join its
// ranks, each with its own capacity, and which of them a message crosses, with the route's
// latency.
//
// A cluster is nodes of `ranks_per_node` ranks (an A2 server's 8 chips, an A3 node's 16 dies).
// Inside a node the ranks are joined by a full mesh (a link per ordered pair), one or two rings,
// or switch planes: a rank has one port on each plane, and since the planes are non-blocking the
// model keeps one injection and one ejection port per rank at the planes' summed rate; many
// sources sending to one rank share its ejection port (incast). With two dies a package, a die
// reaches its partner over their direct package link (SIO) instead. Between nodes a message
// crosses the sender's and the receiver's NICs (RoCE between A2 servers), or the same switch
// ports into a non-blocking second tier (CloudMatrix384); either adds scale_out_latency_ns.
//
// Resource ids are dense (0 .. link_count()-1) so callers keep one calendar per resource in a
// plain vector; the API calls every resource a "link". Routes are fixed per (src, dst).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/profile.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

class Topology {
public:
    // The most ranks a cluster may have (message source ids and sanitizer thread keys are sized
    // for it: sim/exec/message.hpp, sim/sanitize/vector_clock.hpp).
    static constexpr int kMaxRanks = 4096;

    enum class LinkKind { Direct, SwitchOut, SwitchIn, Package, NicOut, NicIn };

    struct Link {
        int src;       // the sending rank; for a port or NIC, the rank it belongs to
        int dst;       // the receiving rank; -1 for a port or NIC
        int lane;      // which ring of a DoubleRing (0 or 1); always 0 otherwise
        LinkKind kind;
    };

    // The resources one message crosses, in order, and what the trip costs in latency. Holds its
    // ids itself or points into the Topology's table: valid while the Topology lives.
    class Route {
    public:
        const int* begin() const { return table_ != nullptr ? table_ : own_.data(); }
        const int* end() const { return begin() + count_; }
        std::size_t size() const { return static_cast<std::size_t>(count_); }
        int operator[](std::size_t i) const { return begin()[i]; }
        std::span<const int> links() const { return {begin(), size()}; }
        int hops() const { return hops_; }                // links or switch traversals, one way
        SimTime latency_ps() const { return latency_ps_; } // one way, scale-out included
        SimTime scale_out_ps() const { return scale_out_ps_; }  // of which crossing nodes adds

    private:
        friend class Topology;
        const int* table_ = nullptr;
        std::array<int, 2> own_{};
        int count_ = 0;
        int hops_ = 0;
        SimTime latency_ps_ = 0;
        SimTime scale_out_ps_ = 0;
    };

    // The cluster `net` describes, holding `ranks` ranks. Throws SimError unless
    // 1 <= ranks <= min(kMaxRanks, net.ranks_per_node x net.max_nodes).
    Topology(const InterconnectProfile& net, int ranks);
    // One node of `ranks` ranks on `kind` (switch planes: one), without rates or latencies: the
    // structure alone, for tests of it.
    Topology(TopologyKind kind, int ranks);

    TopologyKind kind() const { return net_.topology; }
    int ranks() const { return ranks_; }
    int ranks_per_node() const { return per_node_; }
    int node_of(int rank) const { return rank / per_node_; }
    int link_count() const { return static_cast<int>(links_.size()); }

    // Throws SimError for an id outside [0, link_count()).
    const Link& link(int id) const;
    // The resource's capacity, bytes per second one way (0 from the structure-only constructor).
    std::int64_t link_bytes_per_s(int id) const;

    // What a message from src_rank to dst_rank crosses. Rings take the shorter direction,
    // clockwise (increasing rank) on a tie; a DoubleRing pair uses the lower rank's parity.
    // O(1). Throws SimError for ranks out of range or src_rank == dst_rank.
    Route route(int src_rank, int dst_rank) const;

    // The smallest latency of any route (the least a store takes to land anywhere), 0 for a
    // single rank.
    SimTime min_route_latency_ps() const;

    // "link 2->3", "link 2->3 (ring 1)", "rank 3 switch out", "rank 3 switch in",
    // "SIO 2->3", "rank 3 NIC out", "rank 3 NIC in".
    std::string describe_link(int id) const;

private:
    struct Node {
        int first_rank;
        int size;
        int first_link;  // its links: mesh pairs, ring links, or switch ports
        int first_walk;  // rings: where its walks start in route_table_
    };

    void build_node(Node& node);
    void build_mesh(const Node& node);
    void build_rings(Node& node, int lanes);
    void build_switch_ports(const Node& node);
    Route inside_node(const Node& node, int src_rank, int dst_rank) const;
    Route ring_route(const Node& node, int src_rank, int dst_rank) const;
    void check_route_ranks(int src_rank, int dst_rank) const;
    std::int64_t capacity_of(LinkKind kind) const;

    InterconnectProfile net_;
    int ranks_;
    int per_node_;
    std::vector<Node> nodes_;
    std::vector<Link> links_;
    std::vector<int> package_link_;   // per rank: its link to its package partner, -1 if none
    std::vector<int> switch_out_;     // per rank: its injection port, -1 if not switched
    std::vector<int> nic_out_;        // per rank: its NIC (out; in is the next id), -1 if none
    // Ring walks per node and lane: the ids met walking clockwise from the node's first rank
    // twice round the ring, then the same counter-clockwise, so every shortest route is a slice.
    std::vector<int> route_table_;
    SimTime link_latency_ps_ = 0;
    SimTime package_latency_ps_ = 0;
    SimTime scale_out_latency_ps_ = 0;
};

}  // namespace tandem
