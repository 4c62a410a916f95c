// matmul_all_gather described for the shared host (docs/ops/matmul_all_gather.md): A split by
// rows (rank r holds A_r,
// rows [r*M/W, (r+1)*M/W)), B replicated; rank r computes C's row block r = A_r x B (+ bias)
// and every rank ends up with all of C (M x N). Its one variant, `fused`, is fused.cpp
// (README.md in this folder).
#include "kernels/matmul_all_gather/op.hpp"

#include "kernels/common/fused_gemm_defaults.hpp"
#include "kernels/matmul_all_gather/variants.hpp"

namespace tandem::kernels {

const OpDesc& matmul_all_gather_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "matmul_all_gather";
        d.title = "GEMM + AllGather";
        d.doc = "A split by rows, B replicated; each rank computes its row block of C and every rank gets all of C";
        d.sharding = Sharding{Split::Rows, Split::Replicated, false, Split::Replicated};
        d.comm_kind = "allgather";
        // One rank runs it too, as Iris runs its ops on one GPU (the collective moves nothing).
        d.min_ranks = 1;
        d.comm_payload_bytes = [](const OpParams& p) {  // the (W-1) peers' M/W x N row blocks
            return p.ranks > 0 ? (double(p.m) / p.ranks) * double(p.n) * dtype_bytes(p.out_dtype) * (p.ranks - 1) : 0.0;
        };
        // One row tile per rank (M is not padded); N and K ragged (padded).
        d.test_shape = [](int ranks) { return RunShape{ranks, 128 * ranks, 300, 520, 128, 256, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 2048};
        d.scale_shape = RunShape{64, 8192, 4096, 4096};
        VariantDesc defaults = fused_gemm_defaults();
        defaults.output_in_window = true;  // peers store their row blocks into it
        d.variants = {mag::fused_variant(defaults)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
