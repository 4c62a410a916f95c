#pragma once
// A run's cluster in a reader's words: how many nodes of how many ranks, the fabric inside a node
// and the one between (the command line prints it before a run: `-n 64` on Ascend910B1 is eight
// 8-chip servers joined by their NICs, not one 64-chip mesh).
#include <string>

#include "sim/profile.hpp"

namespace tandem::host {

// "8 nodes of 8 ranks: a full mesh of 18.5 GB/s links inside each; between them each rank's NIC
// (25 GB/s), 2 us more a trip"; for ranks within one node, "4 of a node's 8 ranks: ...".
std::string describe_cluster(const InterconnectProfile& net, int ranks);

}  // namespace tandem::host
