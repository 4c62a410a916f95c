// matmul_all_gather's variant `fused`: each finished C tile is pushed to every rank as it is
// produced. Two kernels on two streams, as the Ascend AllGather+GEMM seed launches them:
//   - the GEMM (AIC, kernels/common/gemm_block_push) stores each tile into the rank's own output
//     and, once the store has landed, raises the tile's ready flag (a GM word);
//   - the push kernel (AIV, mag_push_kernel.hpp) waits on each flag and stores the tile from UB
//     into every peer's output, then runs a device barrier across the ranks.
// Why the vector cores push, not the cube: a remote store from L0C (FIX) would hold the cube's
// L0C and FIX pipe for W-1 link-speed stores per tile, while the cube's matmul rate is what the
// op is bound by; the AIVs are otherwise idle, and HCCL's own transfers run on them. The handoff
// is a GM flag per tile (the GEMM's store is visible before its flag, release order), the same
// handoff matmul_all_scatter's producer_consumer uses.
// Why a device barrier at the end rather than per-tile arrival flags: a rank's output is
// complete only when every peer has pushed to it; one barrier (W-1 signals per rank) says so
// with no per-tile bookkeeping, and the time it adds is the wait for the slowest rank, which is
// exactly what "the op ends when every rank has all of C" means.
//
// Views: compute-only is the GEMM kernel alone (own row block only); sequential is the GEMM
// kernel, then the HCCL-style all-gather of C (kernels/common/collectives/all_gather: mesh on a
// full mesh, ring on a ring profile); pipelined is the two kernels above.
#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/collectives/all_gather.hpp"
#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/comm_tile_knobs.hpp"
#include "kernels/common/device_barrier.hpp"
#include "kernels/common/gemm_block_push.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_gather/mag_push_kernel.hpp"
#include "kernels/matmul_all_gather/variants.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mag {

namespace {

constexpr int kGemmStream = 0;
constexpr int kCommStream = 1;

int rows_per_rank(const OpParams& p) { return p.m / p.ranks; }
int padded_n(const OpParams& p) { return round_up(p.n, p.base_n); }
// Readiness tiles of a rank's row block (the GEMM's output tiles).
int block_tiles(const OpParams& p) { return (rows_per_rank(p) / p.base_m) * (padded_n(p) / p.base_n); }

// The baseline all-gather's shape: C (M x padded N), rank r's slice its row block.
collectives::CollectiveLayout baseline_layout(const OpParams& p) {
    return collectives::CollectiveLayout(p.ranks,
                                         collectives::make_comm_grid(p.m, padded_n(p), p.out_dtype, rows_per_rank(p)),
                                         p.out_dtype, std::max(1, p.comm_blocks));
}

// The workspace, in the rank's window, at the same offsets on every rank: the baseline
// collective's inbox and flags, the device barrier's signal matrix, the per-tile ready flags.
struct WorkspaceLayout {
    explicit WorkspaceLayout(const OpParams& p)
        : collective_bytes(round_up(baseline_layout(p).bytes(), std::int64_t{64})),
          barrier(p.ranks, collective_bytes),
          ready_offset(round_up(collective_bytes + barrier.bytes(), std::int64_t{64})),
          bytes(ready_offset + 4 * std::int64_t{block_tiles(p)}) {}

    std::int64_t collective_bytes;
    DeviceBarrierLayout barrier;
    std::int64_t ready_offset;
    std::int64_t bytes;
};

void validate(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_int8_rules(p);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    check_out_dtype_fp32_or_input(p);
    const std::int64_t block = std::int64_t{p.ranks} * p.base_m;
    check_positive(kParamM, p.m, block, "n*base-m");
    // N and K are padded; M is not: rank r's rows sit at r*M/W in every output, so a row block
    // padded to whole tiles would overwrite its neighbour's.
    check_multiple(kParamM, p.m, block, "n*base-m",
                   "each rank's row block of C is whole base-m tiles (N and K may be anything)");
    check_positive(kParamK, p.k, p.base_n, "base-n");
    check_positive(kParamN, p.n, p.base_n, "base-n");
    check_comm_tile(p, lim, "");
    check_comm_blocks_resident(p, lim, "the push kernel ends in a device barrier that waits for every block");
}

class MatmulAllGatherRun final : public OpInstance {
public:
    explicit MatmulAllGatherRun(const OpParams& p)
        : p_(p), ws_(p), tensors_(static_cast<std::size_t>(p.ranks)),
          workspace_(static_cast<std::size_t>(p.ranks), nullptr), window_bases_(static_cast<std::size_t>(p.ranks), -1) {}

    std::vector<std::string> streams() const override { return {"gemm", "comm"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        const GmAllocation& a = gm.allocate("mag_workspace", ws_.bytes, /*shared=*/true);
        workspace_[static_cast<std::size_t>(rank)] = &a;
        window_bases_[static_cast<std::size_t>(rank)] = a.base;
    }

    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }

    ViewPlan view(ViewKind kind, int rank) const override {
        if (kind == ViewKind::Pipelined) return pipelined(rank);
        const collectives::CollectiveArgs ag = baseline_args(rank);
        GemmThenComm parts;
        parts.gemm = {kGemmStream, gemm_kernel(args(rank, false))};
        parts.comm = {kCommStream, collectives::make_all_gather_kernel(ag)};
        parts.comm_reset = [ag](HostContext& host) { collectives::reset_collective_flags(host, ag); };
        return gemm_then_comm_view(kind, parts, {});
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        const std::int64_t base = window_bases_.at(static_cast<std::size_t>(rank));
        if (base < 0 || address < base || address >= base + ws_.bytes) return {};
        const std::int64_t off = address - base;
        if (off >= ws_.ready_offset) return fmt::format("tile_ready[{}]", (off - ws_.ready_offset) / 4);
        if (off >= ws_.barrier.region_offset) return ws_.barrier.name_of(rank, off);
        return "allgather_flag";
    }

private:
    ViewPlan pipelined(int rank) const {
        const GemmBlockArgs flagged = args(rank, /*flagged=*/true);
        HostAction reset = [this, rank](HostContext& host) {
            const std::int64_t base = window_bases_[static_cast<std::size_t>(rank)];
            host.write_signals(base + ws_.ready_offset, block_tiles(p_), 0);
            ws_.barrier.host_reset(host, base);
        };
        // The push kernel first, as the Ascend seed launches its comm kernel before the compute
        // kernel: it is waiting on its first flag when the GEMM starts.
        return launched_together(std::move(reset),
                                 {{kCommStream, make_mag_push_kernel(push(flagged), barrier(rank), p_.comm_blocks)},
                                  {kGemmStream, gemm_kernel(flagged)}});
    }

    KernelLaunch gemm_kernel(const GemmBlockArgs& a) const {
        return make_block_gemm_kernel("MatmulAllGatherGemmKernel", a, p_.compute_blocks);
    }

    GemmBlockArgs args(int rank, bool flagged) const {
        GemmBlockArgs a = block_args_of(p_, tensors_[static_cast<std::size_t>(rank)], rank);
        const int rows = rows_per_rank(p_);
        a.row0 = rank * rows;
        a.col0 = 0;
        for (const RankTensors& other : tensors_) a.out_block.push_back(other.out.sub(a.row0, 0, rows, other.out.cols()));
        if (flagged) a.ready = SignalAddr{rank, window_bases_[static_cast<std::size_t>(rank)] + ws_.ready_offset};
        return a;
    }

    collectives::CollectiveArgs baseline_args(int rank) const {
        std::vector<GmTensor> data;
        std::vector<collectives::CollectiveWorkspace> ws;
        for (std::size_t r = 0; r < tensors_.size(); ++r) {
            data.push_back(tensors_[r].out);
            ws.push_back(collectives::CollectiveWorkspace{workspace_[r], 0});
        }
        return collectives::CollectiveArgs{baseline_layout(p_), collectives::collective_algo_for(p_.topology), rank, data,
                                           ws};
    }

    // The push, spread (TileScatter::spread): each tile's peers in a rotated order, so the push
    // blocks drive all of the rank's links at once, and the last round of tiles (all of them
    // when a row block has fewer tiles than push blocks) split over the blocks by peers.
    collectives::TileScatter push(const GemmBlockArgs& a) const {
        collectives::TileScatter s = a.scatter();
        s.spread = true;
        return s;
    }

    DeviceBarrier barrier(int rank) const {
        DeviceBarrier b;
        b.layout = ws_.barrier;
        b.my_rank = rank;
        b.window_bases = window_bases_;
        return b;
    }

    OpParams p_;
    WorkspaceLayout ws_;
    std::vector<RankTensors> tensors_;
    std::vector<const GmAllocation*> workspace_;
    std::vector<std::int64_t> window_bases_;  // kept for signal_name, which runs after the cluster is gone
};

}  // namespace

VariantDesc fused_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "fused",
                                   "GEMM (AIC) flags each stored C tile; a push kernel (AIV, other stream) stores it into "
                                   "every peer's output, then a device barrier ends the op when every rank has all of C");
    v.constraints = "M % (n*base-m) == 0 (N, K padded); comm blocks <= AIV cores; fp16/bf16/fp32/int8 in (int8: fp32 out, no bias), fp32 or input-dtype "
                    "out; bias none/m/n";
    v.faults = {"skip_last_k_panel", "skip_peer"};
    v.validate = validate;
    v.workspace_bytes = [](const OpParams& p) { return static_cast<double>(WorkspaceLayout(p).bytes); };
    v.knobs = comm_tile_knobs("push");
    v.effective_knobs = comm_tile_effective_knobs;
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<MatmulAllGatherRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mag
