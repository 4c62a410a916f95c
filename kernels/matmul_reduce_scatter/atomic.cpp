// The `atomic` variant: one GEMM kernel on the cube; as each output tile leaves L0C, the FIX pipe
// adds it atomically (TSTORE AtomicAdd) into its owner's output, in the owner's window. The host
// zeroes the outputs before the view; rank 0's partials carry the bias, so it is added once. No
// vector core, no flags: the atomics do the reduction at the owner, and the kernel's end on every
// rank (the host's barrier) is the reduce-scatter's end. Traffic: (W-1)/W x M x N per rank, as
// the reduce-scatter's. Whether the 910B's FIX atomic-add works across HCCS as modelled is an
// assumption (sim/MODEL.md, remote atomics), as for matmul_all_reduce's atomic.
#include <vector>

#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_reduce_scatter/mrs_run.hpp"
#include "kernels/matmul_reduce_scatter/variants.hpp"

namespace tandem::kernels::mrs {

namespace {

Task atomic_kernel(BlockCtx& blk, SummedGemm g, MrsArgs a, bool skip_peer_add) {
    const int W = a.map.ranks;
    const int me = a.rank;
    GemmTilePipeline pipe(blk, g.grid.base_m, g.grid.base_n, g.grid.a.dtype());
    for (int t : tiles_of_block(g, blk.block_idx(), blk.block_num())) {
        co_await compute_partial_tile(pipe, g, t);
        const int owner = a.map.owner(t);
        std::vector<GmTensor> targets;
        // fault: the last rank's partials never reach the other owners
        if (!(skip_peer_add && me == W - 1 && owner != me))
            targets.push_back(a.map.block_tile(a.out[static_cast<std::size_t>(owner)], t));
        co_await pipe.store_each(std::move(targets), AtomicType::AtomicAdd);
    }
    pipe.drain();
}

class AtomicRun final : public MrsRun {
public:
    using MrsRun::MrsRun;

protected:
    ViewPlan pipelined_view(int rank) const override {
        const bool fault = params().fault == "skip_peer_add";
        KernelLaunch k{"MatmulReduceScatterAtomicKernel", CoreType::AIC, params().compute_blocks,
                       [g = gemm(rank), a = args(rank), fault](BlockCtx& blk) { return atomic_kernel(blk, g, a, fault); }};
        // The outputs are zeroed by the host before the view (host/run/op_session.cpp), before the barrier that
        // starts it, so no peer adds into a stale output.
        return launched_together({}, {{kComputeStream, std::move(k)}});
    }
};

}  // namespace

VariantDesc atomic_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "atomic",
                                   "one GEMM kernel (AIC): each output tile atomically added (FIX, AtomicAdd) into its "
                                   "owner's output; outputs zeroed by the host, bias by rank 0");
    v.constraints = "N a multiple of ranks x base-n (each rank's column block whole tiles); any M, K (padded); "
                    "fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (the atomic sum in the output dtype)";
    v.faults = {"skip_peer_add"};
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<AtomicRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mrs
