#pragma once
// What every matmul_reduce_scatter variant shares.
//
// The output split (docs/ops/README.md): rank o gets C's column block o (M x N/W). Every column block is
// whole GEMM tiles (validate_common), so GEMM tile t of the full M x N grid has one owner,
// owner(t) = tile column / (N/W / base_n), and lands at a fixed tile of the owner's output.
//
// Each rank's workspace (one allocation in its peer window):
//   [baseline reduce-scatter: inbox + flags]  (kernels/common/collectives)
//   [P: the rank's partial C_r, "stacked": (W x M) x N/W in the output dtype, row block o holding
//       column block o of C_r. Stacked, the reduce-scatter's slice o (a contiguous range of comm
//       tiles, as HCCL cuts a buffer) is exactly what owner o gets, so the baseline runs on P
//       unchanged; the fused variants address the same tiles.]
//   [ready[src][i]: one word per (source rank, tile i of those this rank owns), raised by src]
// The reference views:
//   compute-only: the GEMM part alone (partials into the local P, no flags);
//   sequential:   that GEMM kernel, then the HCCL-style reduce-scatter on P (mesh on a full
//                 mesh, ring on rings).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/collectives/collective.hpp"
#include "kernels/common/summed_gemm.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mrs {

inline constexpr int kComputeStream = 0;
inline constexpr int kCommStream = 1;

int padded_m(const OpParams& p);
double mrs_workspace_bytes(const OpParams& p);

// Where tiles go, identical on every rank (copied into the kernels by value).
struct TileMap {
    int ranks = 0;
    int m_pad = 0;         // padded M
    int base_m = 0;
    int base_n = 0;
    int n_tiles = 0;       // GEMM tile columns of the full C
    int owner_tiles = 0;   // tile columns per column block (N / W / base_n)
    int tiles = 0;         // GEMM tiles of the full C

    int owner(int t) const { return t % n_tiles / owner_tiles; }
    // Tile t inside its owner's M x N/W block (the output, or row block owner(t) of a stack).
    GmTensor block_tile(const GmTensor& block, int t) const {
        return block.sub(t / n_tiles * base_m, t % n_tiles % owner_tiles * base_n, base_m, base_n);
    }
    // Tile t of a stacked (W x M) x N/W partial.
    GmTensor stacked_tile(const GmTensor& stack, int t) const {
        return block_tile(stack.sub(owner(t) * m_pad, 0, m_pad, stack.cols()), t);
    }
    // The tiles `rank` owns, in the order the GEMM produces them (row-major).
    std::vector<int> owned_tiles(int rank) const;
    // How many tiles each rank owns, and tile t's place among its owner's (owned_tiles order).
    int owned_count() const { return m_pad / base_m * owner_tiles; }
    int owned_index(int t) const { return t / n_tiles * owner_tiles + t % n_tiles % owner_tiles; }
};

// One rank's view of the workspace of every rank.
struct MrsArgs {
    TileMap map;
    int rank = 0;
    std::vector<GmTensor> partial;         // per rank: stacked P
    std::vector<GmTensor> out;             // per rank: M x N/W
    std::vector<std::int64_t> flags_base;  // per rank: device address of ready[0][0]

    // ready[src][i] on the owner: source rank src's partial of the owner's i-th tile is in GM.
    // Indexed by the owner's own tiles (W x tiles/W words per rank, W x tiles in all), not by
    // every tile of C: flags for tiles a rank does not own would never be raised, yet the host
    // resets them each call and the simulator keeps every written signal word (W^2 x tiles in
    // all: 8.4 M words, a 1.6 GiB peak at 64 ranks x 4096 x 16384, 358 MiB without).
    SignalAddr ready(int owner, int src, int t) const {
        return SignalAddr{owner, flags_base[static_cast<std::size_t>(owner)] +
                                     4 * (std::int64_t{src} * map.owned_count() + map.owned_index(t))};
    }
    // Words of ready[][] on each rank.
    int ready_words() const { return map.ranks * map.owned_count(); }
};

// The GEMM kernel every view uses: each tile's partial into the local stacked P; with `notify`,
// then pipe_barrier (the data in GM) and ready[me][t] raised on the tile's owner (release).
KernelLaunch make_stacked_gemm_kernel(const SummedGemm& g, const MrsArgs& a, bool notify, int blocks);

class MrsRun : public OpInstance {
public:
    explicit MrsRun(const OpParams& p);

    std::vector<std::string> streams() const override { return {"compute", "comm"}; }
    void allocate_workspace(int rank, GlobalMemory& gm) override;
    void bind(int rank, const RankTensors& t) override;
    ViewPlan view(ViewKind kind, int rank) const override;

protected:
    virtual ViewPlan pipelined_view(int rank) const = 0;

    const OpParams& params() const { return params_; }
    SummedGemm gemm(int rank) const { return summed_gemm_of(params_, tensors_[static_cast<std::size_t>(rank)], rank); }
    MrsArgs args(int rank) const;
    // The pipelined view's host reset: this rank's ready flags to 0.
    HostAction reset_ready_flags(int rank) const;

private:
    collectives::CollectiveArgs baseline_args(int rank) const;

    OpParams params_;
    collectives::CollectiveLayout layout_;
    TileMap map_;
    std::int64_t partial_offset_;
    std::int64_t flags_offset_;
    std::int64_t bytes_;
    std::vector<const GmAllocation*> workspace_;
    std::vector<RankTensors> tensors_;
};

}  // namespace tandem::kernels::mrs
