// matmul_reduce_scatter: every rank r holds its own A_r (M x K) and B_r (K x N); rank r gets
// column block r (M x N/W) of C = sum over ranks of A_r x B_r (+ bias, added once). --gk is each
// rank's K. The variants (variants.hpp, one file each) share the GEMM part
// (kernels/common/summed_gemm.hpp) and the reference views (mrs_run.hpp: the GEMM alone; the
// GEMM then the HCCL-style reduce-scatter).
#include "kernels/matmul_reduce_scatter/op.hpp"

#include <fmt/format.h>

#include "kernels/common/fused_gemm_defaults.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_reduce_scatter/mrs_run.hpp"
#include "kernels/matmul_reduce_scatter/variants.hpp"

namespace tandem::kernels {

namespace mrs {
namespace {
void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_int8_rules(p);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    const std::int64_t step = std::int64_t{p.ranks} * p.base_n;
    if (p.n % step != 0)
        throw ParamError({{kParamN, p.n}},
                         fmt::format("matmul_reduce_scatter needs N to be a multiple of ranks x base-n = {} x {} = {} "
                                     "(rank r's output is column block r of C, made of whole GEMM tiles)",
                                     p.ranks, p.base_n, step),
                         {{kParamN, nearest_multiple(p.n, step)}});
}
}  // namespace

VariantDesc mrs_defaults() {
    VariantDesc v = fused_gemm_defaults();
    v.output_in_window = true;
    v.validate = validate_common;
    v.workspace_bytes = mrs_workspace_bytes;
    return v;
}
}  // namespace mrs

const OpDesc& matmul_reduce_scatter_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "matmul_reduce_scatter";
        d.title = "GEMM ReduceScatter";
        d.doc = "every rank its own A_r (M x K) and B_r (K x N); rank r gets column block r (M x N/W) of "
                "C = sum of A_r x B_r (+ bias)";
        d.sharding = Sharding{Split::Cols, Split::Rows, true, Split::Cols};
        d.comm_kind = "reducescatter";
        // One rank runs it too, as Iris runs its ops on one GPU (the collective moves nothing).
        d.min_ranks = 1;
        d.comm_payload_bytes = [](const OpParams& p) {  // the reduce-scatter's bytes per rank
            return p.ranks > 0 ? double(p.ranks - 1) / p.ranks * double(p.m) * p.n * dtype_bytes(p.out_dtype) : 0.0;
        };
        // 128-wide tiles so that each rank's column block is two tiles; M and K ragged (padded).
        d.test_shape = [](int ranks) { return RunShape{ranks, 200, 300, 256 * ranks, 128, 128, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 1024};
        d.scale_shape = RunShape{64, 2048, 2048, 16384};
        const VariantDesc defaults = mrs::mrs_defaults();
        d.variants = {mrs::tile_owner_variant(defaults), mrs::atomic_variant(defaults)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
