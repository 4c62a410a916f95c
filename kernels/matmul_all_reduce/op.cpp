// matmul_all_reduce: every rank r holds its own A_r (M x K) and B_r (K x N); every rank gets
// C = sum over ranks of A_r x B_r (+ bias, added once). --gk is each rank's K. The Iris variants
// (variants.hpp, one file each) share the GEMM part (kernels/common/summed_gemm.hpp) and the reference views
// (mar_run.hpp: the GEMM alone; the GEMM then the HCCL-style all-reduce).
#include "kernels/matmul_all_reduce/op.hpp"

#include "kernels/common/op_checks.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/matmul_all_reduce/ascend/variant.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/variant.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels {

namespace mar {
void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    check_stream_k_blocks(p, lim);
}
}  // namespace mar

const OpDesc& matmul_all_reduce_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "matmul_all_reduce";
        d.title = "GEMM AllReduce";
        d.doc = "every rank its own A_r (M x K) and B_r (K x N); every rank gets C = sum of A_r x B_r (+ bias)";
        d.sharding = Sharding{Split::Cols, Split::Rows, true, Split::Replicated};
        d.comm_kind = "allreduce";
        d.comm_payload_bytes = [](const OpParams& p) {  // the all-reduce's bus bytes per rank
            return p.ranks > 0 ? 2.0 * (p.ranks - 1) / p.ranks * double(p.m) * p.n * dtype_bytes(p.out_dtype) : 0.0;
        };
        d.variants = {mar::atomic_variant(), mar::one_shot_variant(), mar::two_shot_variant(),
                      mar::ring_variant(), ascend_all_reduce_variant(), ascend_subtile_all_reduce_variant()};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
