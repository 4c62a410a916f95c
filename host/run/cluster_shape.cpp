#include "host/run/cluster_shape.hpp"

#include <fmt/format.h>

namespace tandem::host {

namespace {

// The fabric inside one node.
std::string inside(const InterconnectProfile& net) {
    std::string s;
    switch (net.topology) {
        case TopologyKind::FullMesh: s = fmt::format("a full mesh of {:g} GB/s links", net.link_gb_s); break;
        case TopologyKind::Ring: s = fmt::format("a ring of {:g} GB/s links", net.link_gb_s); break;
        case TopologyKind::DoubleRing: s = fmt::format("a double ring of {:g} GB/s links", net.link_gb_s); break;
        case TopologyKind::Switched:
            s = fmt::format("{} switch planes, {:g} GB/s a port", net.switch_planes, net.link_gb_s);
            break;
    }
    if (net.dies_per_package == 2) s += fmt::format(", package partners on their own {:g} GB/s link", net.package_link_gb_s);
    return s;
}

}  // namespace

std::string describe_cluster(const InterconnectProfile& net, int ranks) {
    const int per_node = net.ranks_per_node > 0 ? net.ranks_per_node : ranks;
    if (ranks <= per_node) {
        const std::string who = ranks == per_node ? fmt::format("one node of {} ranks", ranks)
                                                  : fmt::format("{} of a node's {} ranks", ranks, per_node);
        return fmt::format("{}: {}", who, inside(net));
    }
    const int nodes = (ranks + per_node - 1) / per_node;
    const std::string between = net.between_nodes == BetweenNodes::Nic
                                    ? fmt::format("each rank's NIC ({:g} GB/s)", net.scale_out_gb_s)
                                    : std::string("a second switch tier through the same ports");
    return fmt::format("{} nodes of {} ranks{}: {} inside each; between them {}, {:g} us more a trip", nodes, per_node,
                       ranks % per_node != 0 ? fmt::format(" (the last holds {})", ranks % per_node) : std::string(),
                       inside(net), between, net.scale_out_latency_ns / 1000.0);
}

}  // namespace tandem::host
