// The cluster line a run prints (host/run/cluster_shape.hpp): nodes, the fabric inside, the one
// between, from the shipped profiles' interconnects.
#include <gtest/gtest.h>

#include "host/run/cluster_shape.hpp"
#include "tests/support/test_support.hpp"

namespace tandem::host {
namespace cluster_shape_test {

TEST(ClusterShape, NamesTheNodesAndBothFabrics) {
    const Profile profile = test::b1_profile();
    const InterconnectProfile& a2 = profile.interconnect;
    EXPECT_EQ(describe_cluster(a2, 8), "one node of 8 ranks: a full mesh of 18.5 GB/s links");
    EXPECT_EQ(describe_cluster(a2, 4), "4 of a node's 8 ranks: a full mesh of 18.5 GB/s links");
    EXPECT_EQ(describe_cluster(a2, 64),
              "8 nodes of 8 ranks: a full mesh of 18.5 GB/s links inside each; between them each rank's NIC (25 GB/s), "
              "2 us more a trip");
    EXPECT_EQ(describe_cluster(a2, 12).substr(0, 40), "2 nodes of 8 ranks (the last holds 4): a");
    InterconnectProfile a3 = a2;
    a3.topology = TopologyKind::Switched;
    a3.switch_planes = 7;
    a3.link_gb_s = 28;
    a3.ranks_per_node = 16;
    a3.dies_per_package = 2;
    a3.package_link_gb_s = 270;
    a3.between_nodes = BetweenNodes::SwitchTier;
    a3.scale_out_latency_ns = 750;
    EXPECT_EQ(describe_cluster(a3, 32),
              "2 nodes of 16 ranks: 7 switch planes, 28 GB/s a port, package partners on their own 270 GB/s link inside "
              "each; between them a second switch tier through the same ports, 0.75 us more a trip");
}

}  // namespace cluster_shape_test
}  // namespace tandem::host
