// matmul_all_reduce: every rank r holds its own A_r (M x K) and B_r (K x N); every rank gets
// C = sum over ranks of A_r x B_r (+ bias, added once). --gk is each rank's K. The Iris variants
// (variants.hpp, one file each) share the GEMM part (kernels/common/summed_gemm.hpp) and the reference views
// (mar_run.hpp: the GEMM alone; the GEMM then the HCCL-style all-reduce).
#include "kernels/matmul_all_reduce/op.hpp"

#include "kernels/common/fused_gemm_defaults.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/matmul_all_reduce/ascend/variant.hpp"
#include "kernels/matmul_all_reduce/ascend_subtile/variant.hpp"
#include "kernels/matmul_all_reduce/variants.hpp"

namespace tandem::kernels {

namespace mar {
namespace {
void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_int8_rules(p);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    check_stream_k_blocks(p, lim);
}
}  // namespace

VariantDesc iris_defaults() {
    VariantDesc v = fused_gemm_defaults();
    v.output_in_window = true;
    v.validate = validate_common;
    return v;
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
        // One rank runs it too, as Iris runs its ops on one GPU (the collective moves nothing).
        d.min_ranks = 1;
        d.comm_payload_bytes = [](const OpParams& p) {  // the all-reduce's bus bytes per rank
            return p.ranks > 0 ? 2.0 * (p.ranks - 1) / p.ranks * double(p.m) * p.n * dtype_bytes(p.out_dtype) : 0.0;
        };
        // M and N ragged (padded to 3 x 2 tiles: 6 over 4 blocks, so that stream-K splits tiles);
        // K whole base-n panels (the Ascend replicas do not pad K).
        d.test_shape = [](int ranks) { return RunShape{ranks, 300, 512, 333, 128, 256, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 1024};
        d.scale_shape = RunShape{64, 2048, 2048, 2048};
        const VariantDesc iris = mar::iris_defaults();
        d.variants = {mar::atomic_variant(iris), mar::one_shot_variant(iris), mar::two_shot_variant(iris),
                      mar::ring_variant(iris), ascend_all_reduce_variant(iris),
                      ascend_subtile_all_reduce_variant(iris)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
