// The cluster's fabric (sim/net/topology.hpp): switched nodes, package partners, nodes joined by
// NICs or a second switch tier, each resource's capacity and each route's latency, and the
// shipped profiles' clusters.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/net/topology.hpp"
#include "sim/profile.hpp"
#include "sim/sim_error.hpp"
#include "tests/support/calendar_checks.hpp"

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

namespace tandem {
namespace fabric_test {

constexpr std::int64_t kGBps = 1000 * 1000 * 1000;

Profile shipped(const std::string& soc) {
    return load_profile_by_soc(soc, std::filesystem::path(TANDEM_SOURCE_DIR) / "sim" / "profiles");
}

std::vector<Topology::LinkKind> kinds_of(const Topology& topo, int src, int dst) {
    std::vector<Topology::LinkKind> kinds;
    for (int id : topo.route(src, dst)) kinds.push_back(topo.link(id).kind);
    return kinds;
}

using K = Topology::LinkKind;

TEST(Fabric, A3NodeRoutesThroughTheSwitchPortsOrThePackageLink) {
    const Profile p = shipped("Ascend910_9392");
    const Topology topo(p.interconnect, 16);
    EXPECT_EQ(topo.kind(), TopologyKind::Switched);
    // 16 dies: an injection and an ejection port each, and a package link each way per package.
    EXPECT_EQ(topo.link_count(), 16 * 2 + 16);
    // Dies 0 and 1 share a package: SIO, at its own rate and latency.
    EXPECT_EQ(kinds_of(topo, 0, 1), (std::vector<K>{K::Package}));
    EXPECT_EQ(topo.describe_link(topo.route(0, 1)[0]), "SIO 0->1");
    EXPECT_EQ(topo.link_bytes_per_s(topo.route(0, 1)[0]), 270 * kGBps);
    EXPECT_EQ(topo.route(0, 1).latency_ps(), from_ns(p.interconnect.package_link_latency_ns));
    // Any other die: out of the sender's port, into the receiver's, 7 planes x 28 GB/s each.
    EXPECT_EQ(kinds_of(topo, 0, 2), (std::vector<K>{K::SwitchOut, K::SwitchIn}));
    EXPECT_EQ(topo.describe_link(topo.route(0, 2)[0]), "rank 0 switch out");
    EXPECT_EQ(topo.describe_link(topo.route(0, 2)[1]), "rank 2 switch in");
    EXPECT_EQ(topo.link_bytes_per_s(topo.route(0, 2)[0]), 196 * kGBps);
    EXPECT_EQ(topo.route(0, 2).latency_ps(), from_ns(p.interconnect.link_latency_ns));
    EXPECT_EQ(topo.route(0, 2).hops(), 1);
}

// Incast: every source sending to one die crosses that die's one ejection port; otherwise the
// non-blocking planes give each pair its own ports.
TEST(Fabric, IncastSharesTheReceiversEjectionPort) {
    const Topology topo(shipped("Ascend910_9392").interconnect, 16);
    std::set<int> last_hops, first_hops;
    for (int src = 2; src < 16; ++src) {
        last_hops.insert(topo.route(src, 0)[1]);
        first_hops.insert(topo.route(src, 0)[0]);
    }
    EXPECT_EQ(last_hops.size(), 1U);
    EXPECT_EQ(first_hops.size(), 14U);
    // Two disjoint pairs share nothing.
    for (int a : topo.route(2, 3)) {
        for (int b : topo.route(4, 5)) EXPECT_NE(a, b);
    }
}

TEST(Fabric, CloudMatrixNodesAreJoinedByTheSecondTier) {
    const Profile p = shipped("Ascend910_9392");
    const Topology topo(p.interconnect, 768);
    EXPECT_EQ(topo.ranks_per_node(), 16);
    EXPECT_EQ(topo.node_of(767), 47);
    // Across nodes: the same die ports, plus what the second tier adds.
    EXPECT_EQ(kinds_of(topo, 0, 16), (std::vector<K>{K::SwitchOut, K::SwitchIn}));
    EXPECT_EQ(topo.route(0, 16)[0], topo.route(0, 2)[0]);
    EXPECT_EQ(topo.route(0, 16).latency_ps(),
              from_ns(p.interconnect.link_latency_ns) + from_ns(p.interconnect.scale_out_latency_ns));
    EXPECT_EQ(topo.route(0, 16).scale_out_ps(), from_ns(p.interconnect.scale_out_latency_ns));
    EXPECT_EQ(topo.route(0, 2).scale_out_ps(), 0);
    EXPECT_EQ(topo.link_count(), 768 * 3);  // two ports and one package link per die
    test::expect_sim_error([&] { Topology(p.interconnect, 769); }, {"769", "48 node(s) of 16"});
}

TEST(Fabric, A2ServersAreMeshesJoinedByNics) {
    const Profile p = shipped("Ascend910B1");
    const Topology topo(p.interconnect, 384);
    // Inside a server: the pair's own HCCS link.
    EXPECT_EQ(kinds_of(topo, 8, 15), (std::vector<K>{K::Direct}));
    EXPECT_EQ(topo.link(topo.route(8, 15)[0]).src, 8);
    EXPECT_EQ(topo.link(topo.route(8, 15)[0]).dst, 15);
    EXPECT_EQ(topo.link_bytes_per_s(topo.route(8, 15)[0]), static_cast<std::int64_t>(p.interconnect.link_gb_s * 1e9));
    // Between servers: the two chips' RoCE NICs.
    EXPECT_EQ(kinds_of(topo, 0, 8), (std::vector<K>{K::NicOut, K::NicIn}));
    EXPECT_EQ(topo.describe_link(topo.route(0, 8)[0]), "rank 0 NIC out");
    EXPECT_EQ(topo.describe_link(topo.route(0, 8)[1]), "rank 8 NIC in");
    EXPECT_EQ(topo.link_bytes_per_s(topo.route(0, 8)[0]), static_cast<std::int64_t>(p.interconnect.scale_out_gb_s * 1e9));
    EXPECT_GT(topo.route(0, 8).latency_ps(), topo.route(0, 1).latency_ps());
    // 48 meshes of 8 and two NIC ports a chip, not a 384-chip full mesh.
    EXPECT_EQ(topo.link_count(), 48 * 8 * 7 + 384 * 2);
    test::expect_sim_error([&] { Topology(p.interconnect, 385); }, {"385"});
}

TEST(Fabric, APartialLastNodeIsAMeshOfWhatIsLeft) {
    const Topology topo(shipped("Ascend910B1").interconnect, 12);  // 8 + 4
    EXPECT_EQ(topo.link_count(), 8 * 7 + 4 * 3 + 12 * 2);
    for (int s = 8; s < 12; ++s) {
        for (int d = 8; d < 12; ++d) {
            if (s == d) continue;
            const Topology::Link& l = topo.link(topo.route(s, d)[0]);
            EXPECT_EQ(l.src, s);
            EXPECT_EQ(l.dst, d);
        }
    }
}

TEST(Fabric, EightRanksOfAnA2ServerKeepTheirMesh) {
    // What every measured A2 row runs on: no NIC, one link per ordered pair.
    const Topology topo(shipped("Ascend910B1").interconnect, 8);
    EXPECT_EQ(topo.link_count(), 8 * 7);
    for (int s = 0; s < 8; ++s) {
        for (int d = 0; d < 8; ++d) {
            if (s != d) EXPECT_EQ(kinds_of(topo, s, d), (std::vector<K>{K::Direct}));
        }
    }
}

TEST(Fabric, RingsInsideNodesKeepTheirLocalShape) {
    InterconnectProfile net = shipped("Ascend910B1").interconnect;
    net.topology = TopologyKind::Ring;
    const Topology topo(net, 16);
    // Node 1 is a ring of ranks 8..15: 8 -> 10 goes 8 -> 9 -> 10; 8 -> 15 the other way.
    EXPECT_EQ(topo.route(8, 10).size(), 2U);
    EXPECT_EQ(topo.link(topo.route(8, 10)[0]).dst, 9);
    EXPECT_EQ(topo.route(8, 15).size(), 1U);
    EXPECT_EQ(topo.link(topo.route(8, 15)[0]).dst, 15);
    EXPECT_EQ(topo.route(8, 10).latency_ps(), 2 * from_ns(net.link_latency_ns));
    EXPECT_EQ(kinds_of(topo, 3, 12), (std::vector<K>{K::NicOut, K::NicIn}));
}

TEST(Fabric, SmallestRouteLatencyIsThePackageLinksWhenQuicker) {
    const Profile p = shipped("Ascend910_9392");
    ASSERT_LT(p.interconnect.package_link_latency_ns, p.interconnect.link_latency_ns);
    EXPECT_EQ(Topology(p.interconnect, 4).min_route_latency_ps(), from_ns(p.interconnect.package_link_latency_ns));
    EXPECT_EQ(Topology(shipped("Ascend910B1").interconnect, 8).min_route_latency_ps(),
              from_ns(shipped("Ascend910B1").interconnect.link_latency_ns));
    EXPECT_EQ(Topology(p.interconnect, 1).min_route_latency_ps(), 0);
}

}  // namespace fabric_test
}  // namespace tandem
