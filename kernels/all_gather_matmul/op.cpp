// all_gather_matmul described for the shared host (Iris's all_gather_matmul; README.md in this
// folder): A split along K, B replicated, every rank computes C = all_gather(A) x B (+ bias).
// The variants refine the op's defaults (agm_defaults); what they run is agm_run.cpp.
#include "kernels/all_gather_matmul/op.hpp"

#include "kernels/all_gather_matmul/agm_run.hpp"
#include "kernels/common/fused_gemm_defaults.hpp"

namespace tandem::kernels {

namespace agm {
namespace {

// What the variants share (agm_run.hpp): one OpInstance (the variant picks its kernels), its
// checks and workspace.
VariantDesc agm_defaults() {
    VariantDesc v = fused_gemm_defaults();
    v.constraints = "K % (n*base-n) == 0, for int8 K % (n*2*base-n) == 0 (each shard whole K tiles); M, N any (padded); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias), fp32 or "
                    "the input dtype out; bias none/m/n";
    v.validate = validate;
    v.workspace_bytes = workspace_bytes;
    v.make = make_run;
    return v;
}

VariantDesc pull_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "pull",
                                   "one persistent GEMM kernel (AIC) loads every remote A tile itself from its owner's "
                                   "window, no flags, no staging; remote A is re-read for every N tile");
    v.faults = {"skip_remote_k_tile"};
    return v;
}

VariantDesc push_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "push",
                                   "a producer kernel (AIV) loads each A tile once, stores it into every rank's inbox and "
                                   "raises its per-(source, M tile, K tile) flag; the GEMM waits per K tile and reads "
                                   "the local inbox");
    v.constraints += "; --comm-blocks is the producer block count";
    v.faults = {"skip_inbox_store", "skip_remote_k_tile"};
    return v;
}

VariantDesc staged_variant(const VariantDesc& defaults) {
    VariantDesc v = derive_variant(defaults, "staged",
                                   "fetcher blocks (AIV) copy remote A into a local staging buffer and raise a flag per "
                                   "k_per_flag K tiles; the GEMM blocks consume");
    v.constraints += "; --comm-blocks is the fetcher block count";
    v.faults = {"skip_staged_copy"};
    v.knobs = {KnobDesc{"k_per_flag", {}, "staged: K tiles per flag (default min(4, K/n/base-n))", {1, 2, 4, 8, 16}},
               KnobDesc{"stages", {}, "staged: UB buffers each fetcher block rotates (default 2)", {1, 2, 3}}};
    v.effective_knobs = [](const OpParams& p) {
        return std::map<std::string, int>{{"k_per_flag", k_per_flag_of(p)}, {"stages", stages_of(p)}};
    };
    return v;
}

}  // namespace
}  // namespace agm

const OpDesc& all_gather_matmul_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "all_gather_matmul";
        d.title = "AllGather MatMul";
        d.doc = "Iris's all_gather_matmul: A split along K (--gk is the whole K), B replicated, every rank computes "
                "C = all_gather(A) x B (+ bias)";
        d.sharding = Sharding{Split::Cols, Split::Replicated, false, Split::Replicated};
        d.comm_kind = "allgather";
        // One rank runs it too, as Iris runs its ops on one GPU (the collective moves nothing).
        d.min_ranks = 1;
        d.comm_payload_bytes = [](const OpParams& p) {  // M x K/n from each of n-1 peers
            return p.ranks > 0 ? double(p.m) * (double(p.k) / p.ranks) * dtype_bytes(p.dtype) * (p.ranks - 1) : 0.0;
        };
        // Small 64 x 64 tiles; M and N ragged (padded); each rank's shard two K tiles.
        d.test_shape = [](int ranks) { return RunShape{ranks, 200, 128 * ranks, 150, 64, 64, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 1024};
        d.scale_shape = RunShape{64, 2048, 16384, 2048};
        const VariantDesc defaults = agm::agm_defaults();
        d.variants = {agm::pull_variant(defaults), agm::push_variant(defaults), agm::staged_variant(defaults)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
