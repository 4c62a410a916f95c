#include "sim/net/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

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

int lanes_of(TopologyKind kind) { return kind == TopologyKind::DoubleRing ? 2 : 1; }

std::int64_t bytes_per_s(double gb_s) { return static_cast<std::int64_t>(std::llround(gb_s * 1.0e9)); }

InterconnectProfile one_node(TopologyKind kind, int ranks) {
    InterconnectProfile net;
    net.topology = kind;
    net.ranks_per_node = std::max(ranks, 1);
    net.max_nodes = 1;
    net.switch_planes = kind == TopologyKind::Switched ? 1 : 0;
    net.dies_per_package = 1;
    return net;
}

}  // namespace

Topology::Topology(TopologyKind kind, int ranks) : Topology(one_node(kind, ranks), ranks) {}

Topology::Topology(const InterconnectProfile& net, int ranks)
    : net_(net), ranks_(ranks), per_node_(std::max(net.ranks_per_node, 1)) {
    if (ranks < 1 || ranks > kMaxRanks) {
        throw SimError(fmt::format("topology: rank count {} is outside [1, {}]", ranks, kMaxRanks));
    }
    const std::int64_t most = std::int64_t{per_node_} * std::max(net.max_nodes, 1);
    if (ranks > most) {
        throw SimError(fmt::format("topology: {} ranks is more than the cluster holds: {} node(s) of {} ranks ({})",
                                   ranks, net.max_nodes, per_node_, most));
    }
    link_latency_ps_ = from_ns(net.link_latency_ns);
    package_latency_ps_ = from_ns(net.package_link_latency_ns);
    scale_out_latency_ps_ = from_ns(net.scale_out_latency_ns);
    for (int first = 0; first < ranks; first += per_node_) {
        nodes_.push_back(Node{first, std::min(per_node_, ranks - first), 0, 0});
    }
    for (Node& node : nodes_) build_node(node);
    package_link_.assign(static_cast<std::size_t>(ranks), -1);
    if (net.dies_per_package == 2) {
        for (int r = 0; r < ranks; ++r) {
            const int partner = r ^ 1;  // dies 2p and 2p + 1 share a package; nodes hold whole packages
            if (partner >= ranks) continue;
            package_link_[static_cast<std::size_t>(r)] = link_count();
            links_.push_back({r, partner, 0, LinkKind::Package});
        }
    }
    nic_out_.assign(static_cast<std::size_t>(ranks), -1);
    if (nodes_.size() > 1 && net.between_nodes == BetweenNodes::Nic) {
        for (int r = 0; r < ranks; ++r) {
            nic_out_[static_cast<std::size_t>(r)] = link_count();
            links_.push_back({r, -1, 0, LinkKind::NicOut});
            links_.push_back({r, -1, 0, LinkKind::NicIn});
        }
    }
}

void Topology::build_node(Node& node) {
    node.first_link = link_count();
    switch (net_.topology) {
        case TopologyKind::FullMesh: build_mesh(node); break;
        case TopologyKind::Ring:
        case TopologyKind::DoubleRing: build_rings(node, lanes_of(net_.topology)); break;
        case TopologyKind::Switched: build_switch_ports(node); break;
    }
}

// Link id of local pair (s, d) is first_link + s * (c - 1) + (d < s ? d : d - 1).
void Topology::build_mesh(const Node& node) {
    for (int s = 0; s < node.size; ++s) {
        for (int d = 0; d < node.size; ++d) {
            if (d != s) links_.push_back({node.first_rank + s, node.first_rank + d, 0, LinkKind::Direct});
        }
    }
}

// Per lane: clockwise links i -> i+1 get ids base + i, counter-clockwise links i -> i-1 get
// base + c + i (local indices). The route table block of a lane holds the clockwise walk from
// the node's first rank (2c ids) then the counter-clockwise walk (2c ids); going round twice
// lets any route of up to c hops be read without wrapping.
void Topology::build_rings(Node& node, int lanes) {
    const int c = node.size;
    const int per_lane = ring_links_per_lane(c);
    node.first_walk = static_cast<int>(route_table_.size());
    route_table_.resize(route_table_.size() + static_cast<std::size_t>(lanes) * 4 * static_cast<std::size_t>(c), 0);
    if (per_lane == 0) return;  // a single rank has nobody to talk to
    for (int lane = 0; lane < lanes; ++lane) {
        const int base = node.first_link + lane * per_lane;
        for (int i = 0; i < c; ++i) links_.push_back({node.first_rank + i, node.first_rank + (i + 1) % c, lane, LinkKind::Direct});
        if (c > 2) {
            for (int i = 0; i < c; ++i) {
                links_.push_back({node.first_rank + i, node.first_rank + (i - 1 + c) % c, lane, LinkKind::Direct});
            }
        }
        int* clockwise = &route_table_[static_cast<std::size_t>(node.first_walk + (2 * lane) * 2 * c)];
        int* counter = &route_table_[static_cast<std::size_t>(node.first_walk + (2 * lane + 1) * 2 * c)];
        for (int k = 0; k < 2 * c; ++k) {
            clockwise[k] = base + k % c;
            // Position k of the counter-clockwise walk leaves local rank (c - k) mod c. With
            // c <= 2 the tie rule always picks clockwise, so this block is never read.
            if (c > 2) counter[k] = base + c + (2 * c - k) % c;
        }
    }
}

// Each rank's injection port, then its ejection port: ids first_link + 2s and + 2s + 1.
void Topology::build_switch_ports(const Node& node) {
    if (switch_out_.empty()) switch_out_.assign(static_cast<std::size_t>(ranks_), -1);
    for (int s = 0; s < node.size; ++s) {
        switch_out_[static_cast<std::size_t>(node.first_rank + s)] = link_count();
        links_.push_back({node.first_rank + s, -1, 0, LinkKind::SwitchOut});
        links_.push_back({node.first_rank + s, -1, 0, LinkKind::SwitchIn});
    }
}

const Topology::Link& Topology::link(int id) const {
    if (id < 0 || id >= link_count()) {
        throw SimError(fmt::format("topology: link id {} is outside [0, {})", id, link_count()));
    }
    return links_[static_cast<std::size_t>(id)];
}

std::int64_t Topology::capacity_of(LinkKind kind) const {
    switch (kind) {
        case LinkKind::Direct: return bytes_per_s(net_.link_gb_s);
        case LinkKind::SwitchOut:
        case LinkKind::SwitchIn: return bytes_per_s(net_.link_gb_s * net_.switch_planes);
        case LinkKind::Package: return bytes_per_s(net_.package_link_gb_s);
        case LinkKind::NicOut:
        case LinkKind::NicIn: return bytes_per_s(net_.scale_out_gb_s);
    }
    return 0;
}

std::int64_t Topology::link_bytes_per_s(int id) const { return capacity_of(link(id).kind); }

void Topology::check_route_ranks(int src_rank, int dst_rank) const {
    for (int rank : {src_rank, dst_rank}) {
        if (rank < 0 || rank >= ranks_) {
            throw SimError(fmt::format("topology: route {}->{}: rank {} is outside [0, {})", src_rank, dst_rank, rank, ranks_));
        }
    }
    if (src_rank == dst_rank) throw SimError(fmt::format("topology: no route from rank {} to itself", src_rank));
}

Topology::Route Topology::ring_route(const Node& node, int src_rank, int dst_rank) const {
    const int c = node.size;
    const int s = src_rank - node.first_rank;
    const int d = dst_rank - node.first_rank;
    // The lower rank's parity picks the ring: neighbour pairs alternate between the two rings,
    // so ring algorithms use both rings' bandwidth, and a rank's two neighbours sit on different rings.
    const int lane = net_.topology == TopologyKind::DoubleRing ? std::min(src_rank, dst_rank) % 2 : 0;
    const int clockwise_hops = (d - s + c) % c;
    const int counter_hops = c - clockwise_hops;
    Route r;
    const std::size_t walk = static_cast<std::size_t>(node.first_walk) + static_cast<std::size_t>(2 * lane) * 2 * static_cast<std::size_t>(c);
    if (clockwise_hops <= counter_hops) {
        r.table_ = &route_table_[walk + static_cast<std::size_t>(s)];
        r.count_ = clockwise_hops;
    } else {
        // The counter-clockwise walk reaches s after (c - s) mod c hops.
        r.table_ = &route_table_[walk + 2 * static_cast<std::size_t>(c) + static_cast<std::size_t>((c - s) % c)];
        r.count_ = counter_hops;
    }
    r.hops_ = r.count_;
    r.latency_ps_ = link_latency_ps_ * r.count_;
    return r;
}

Topology::Route Topology::inside_node(const Node& node, int src_rank, int dst_rank) const {
    Route r;
    if (const int pkg = package_link_[static_cast<std::size_t>(src_rank)]; pkg >= 0 && links_[static_cast<std::size_t>(pkg)].dst == dst_rank) {
        r.own_[0] = pkg;
        r.count_ = r.hops_ = 1;
        r.latency_ps_ = package_latency_ps_;
        return r;
    }
    switch (net_.topology) {
        case TopologyKind::FullMesh: {
            const int s = src_rank - node.first_rank;
            const int d = dst_rank - node.first_rank;
            r.own_[0] = node.first_link + s * (node.size - 1) + (d < s ? d : d - 1);
            r.count_ = 1;
            break;
        }
        case TopologyKind::Switched:
            r.own_ = {switch_out_[static_cast<std::size_t>(src_rank)], switch_out_[static_cast<std::size_t>(dst_rank)] + 1};
            r.count_ = 2;
            break;
        case TopologyKind::Ring:
        case TopologyKind::DoubleRing: return ring_route(node, src_rank, dst_rank);
    }
    r.hops_ = 1;
    r.latency_ps_ = link_latency_ps_;
    return r;
}

Topology::Route Topology::route(int src_rank, int dst_rank) const {
    check_route_ranks(src_rank, dst_rank);
    const int src_node = node_of(src_rank);
    if (src_node == node_of(dst_rank)) return inside_node(nodes_[static_cast<std::size_t>(src_node)], src_rank, dst_rank);
    Route r;
    if (net_.between_nodes == BetweenNodes::Nic) {
        r.own_ = {nic_out_[static_cast<std::size_t>(src_rank)], nic_out_[static_cast<std::size_t>(dst_rank)] + 1};
    } else {
        r.own_ = {switch_out_[static_cast<std::size_t>(src_rank)], switch_out_[static_cast<std::size_t>(dst_rank)] + 1};
    }
    r.count_ = 2;
    r.hops_ = 1;
    r.scale_out_ps_ = scale_out_latency_ps_;
    r.latency_ps_ = link_latency_ps_ + scale_out_latency_ps_;
    return r;
}

SimTime Topology::min_route_latency_ps() const {
    if (ranks_ < 2) return 0;
    SimTime least = link_latency_ps_;
    if (net_.dies_per_package == 2) least = std::min(least, package_latency_ps_);
    return least;
}

std::string Topology::describe_link(int id) const {
    const Link& l = link(id);
    switch (l.kind) {
        case LinkKind::Direct:
            return net_.topology == TopologyKind::DoubleRing ? fmt::format("link {}->{} (ring {})", l.src, l.dst, l.lane)
                                                             : fmt::format("link {}->{}", l.src, l.dst);
        case LinkKind::SwitchOut: return fmt::format("rank {} switch out", l.src);
        case LinkKind::SwitchIn: return fmt::format("rank {} switch in", l.src);
        case LinkKind::Package: return fmt::format("SIO {}->{}", l.src, l.dst);
        case LinkKind::NicOut: return fmt::format("rank {} NIC out", l.src);
        case LinkKind::NicIn: return fmt::format("rank {} NIC in", l.src);
    }
    return "link";
}

}  // namespace tandem
