// The `atomic` variant (Iris's matmul_all_reduce "atomic"): one GEMM kernel on the cube; as each
// output tile leaves L0C, the FIX pipe adds it atomically into the output of every rank, starting
// at rank me + t for tile t, so the blocks (which finish tiles together) spread over all links
// rather than queue on one. The host zeroes the outputs before the view; rank 0's partials carry the bias. No
// vector core, no flags: the atomics do the reduction at the targets, and the kernel's end on
// every rank (the host's barrier) is the all-reduce's end.
//
// Why remote FIX stores from the cube: the partial is in L0C in fp32; taking it through GM and
// UB to a vector core only to store it again would double the local traffic, and Iris's kernel
// does exactly this (tl.atomic_add from the GEMM program into the peers' heaps). The 910B's
// FIXPIPE writes to any GM address the core can map, HCCS peers' windows included; whether its
// atomic-add mode works across HCCS as modelled is an assumption (sim/MODEL.md, remote atomics).
#include <vector>

#include "kernels/common/view_plans.hpp"
#include "kernels/matmul_all_reduce/mar_run.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels::mar {

namespace {

Task atomic_kernel(BlockCtx& blk, SummedGemm g, std::vector<GmTensor> outs, int me, bool skip_last_peer) {
    const int W = static_cast<int>(outs.size());
    GemmTilePipeline pipe(blk, g.grid.base_m, g.grid.base_n, g.grid.a.dtype());
    for (int t : tiles_of_block(g, blk.block_idx(), blk.block_num())) {
        co_await compute_partial_tile(pipe, g, t);
        std::vector<GmTensor> targets;
        for (int k = 0; k < W; ++k) {
            if (skip_last_peer && W > 1 && (me + k + t) % W == (me + W - 1) % W) continue;  // fault: rank me-1 never gets it
            targets.push_back(g.grid.c_tile(outs[static_cast<std::size_t>((me + k + t) % W)], t));
        }
        co_await pipe.store_each(std::move(targets), AtomicType::AtomicAdd);
    }
    pipe.drain();
}

class AtomicRun final : public MarRun {
public:
    explicit AtomicRun(const OpParams& p) : MarRun(p, 0) {}

protected:
    ViewPlan pipelined_view(int rank) const override {
        const bool fault = params().fault == "skip_peer_add";
        if (stream_k()) {
            // The same targets and order; a split tile's adds leave from UB after its fix-up.
            TileSink sink;
            sink.atomic = AtomicType::AtomicAdd;
            sink.targets = [g = gemm(rank).grid, outs = outputs(), me = rank, fault](int t) {
                const int W = static_cast<int>(outs.size());
                std::vector<GmTensor> targets;
                for (int k = 0; k < W; ++k) {
                    if (fault && W > 1 && (me + k + t) % W == (me + W - 1) % W) continue;
                    targets.push_back(g.c_tile(outs[static_cast<std::size_t>((me + k + t) % W)], t));
                }
                return targets;
            };
            return launched_together(reset_stream_k(rank),
                                     {{kComputeStream, make_stream_k_gemm_kernel("MatmulAllReduceAtomicStreamKKernel",
                                                                                 stream_k_gemm(rank), sink)}});
        }
        KernelLaunch k{"MatmulAllReduceAtomicKernel", CoreType::AIC, params().compute_blocks,
                       [g = gemm(rank), outs = outputs(), rank, fault](BlockCtx& blk) {
                           return atomic_kernel(blk, g, outs, rank, fault);
                       }};
        // The outputs are zeroed by the host before the view (host/run/op_session.cpp), before the barrier that
        // starts it, so no peer adds into a stale output.
        return launched_together({}, {{kComputeStream, std::move(k)}});
    }
};

}  // namespace

VariantDesc atomic_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "atomic",
                                   "one GEMM kernel (AIC): each output tile atomically added (FIX, AtomicAdd) into every "
                                   "rank's output; outputs zeroed by the host, bias by rank 0");
    v.constraints = "any M, N, K (padded to base-m, base-n); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias); fp32 or input-dtype out (the atomic sum "
                    "in the output dtype)";
    v.schedules = gemm_schedule_names();
    v.faults = {"skip_peer_add", "skip_fixup_partial"};
    v.workspace_bytes = [](const OpParams& p) { return mar_workspace_bytes(p, 0); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<AtomicRun>(p); };
    return v;
}

}  // namespace tandem::kernels::mar
