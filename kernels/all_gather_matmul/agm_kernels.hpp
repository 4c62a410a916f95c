#pragma once
// all_gather_matmul's device code (see agm_layout.hpp for the data layout):
//   the GEMM kernel (AIC)  every output tile walks every source's K tiles; where it reads A and
//                          whether it waits depends on the variant (AgmASource, AgmWait);
//   the push producer (AIV) loads each tile of its own shard once and stores it into every
//                          rank's inbox, then raises that tile's flag there;
//   the staged fetcher (AIV) copies the peers' shards into the local staging buffer and raises
//                          one local flag per group of k_per_flag K tiles.
#include <vector>

#include "kernels/all_gather_matmul/agm_layout.hpp"
#include "kernels/op_desc.hpp"
#include "sim/exec/logical_process.hpp"

namespace tandem::kernels {

// Deliberate bugs (tests prove verification catches them).
enum class AgmFault : std::uint8_t {
    None,
    SkipRemoteKTile,   // GEMM: drops the last K tile of the last remote source it reads
    SkipInboxStore,    // push: one tile is not stored into the next rank's inbox (its flag still rises)
    SkipStagedCopy,    // staged: the last K tile of each group is not copied (its flag still rises)
};

enum class AgmASource : std::uint8_t {
    Local,   // this rank's gathered buffer (push inbox, staging buffer, baseline all-gather)
    Remote,  // pull: each source's own block in that source's window, loaded over the link
};

enum class AgmWait : std::uint8_t {
    None,   // the data is there (pull, the local GEMM of the baselines)
    Peers,  // staged: wait on a peer's (source, row tile, K group) flag before the group's first
            // K tile; the own shard is in place before the call
    All,    // push: the same for every source, the own one included (the producer stores it too)
};

// What every kernel of one rank needs.
struct AgmArgs {
    AgmShape shape;
    int my_rank = 0;
    std::vector<const GmAllocation*> windows;  // per rank
    GmTensor a_shard;  // A_r: Mp x Kr, the host's (push loads its tiles from here)
    GmTensor b;      // K x N (DN), padded to N tiles
    GmTensor c;      // Mp x Np, out dtype
    GmTensor bias;   // 1 x len (invalid without bias)
    BiasKind bias_kind = BiasKind::None;
    AgmFault fault = AgmFault::None;
    int stages = 2;  // staged: UB buffers per fetcher block

    AgmWindow window() const { return AgmWindow(shape); }
    std::int64_t window_base(int rank) const { return windows[static_cast<std::size_t>(rank)]->base; }
    // The gathered Mp x K buffer in `rank`'s window.
    GmTensor gathered(int rank) const;
};

KernelLaunch make_agm_gemm_kernel(const AgmArgs& args, AgmASource source, AgmWait wait, int blocks);
KernelLaunch make_agm_push_kernel(const AgmArgs& args, int blocks);
KernelLaunch make_agm_fetch_kernel(const AgmArgs& args, int blocks);

}  // namespace tandem::kernels
