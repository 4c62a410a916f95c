// matmul_reduce_scatter: every rank r holds its own A_r (M x K) and B_r (K x N); rank r gets
// column block r (M x N/W) of C = sum over ranks of A_r x B_r (+ bias, added once). --gk is each
// rank's K. The variants (variants.hpp, one file each) share the GEMM part
// (kernels/common/summed_gemm.hpp) and the reference views (mrs_run.hpp: the GEMM alone; the
// GEMM then the HCCL-style reduce-scatter).
#include "kernels/matmul_reduce_scatter/op.hpp"

#include <fmt/format.h>

#include "kernels/common/op_checks.hpp"
#include "kernels/matmul_reduce_scatter/variants.hpp"

namespace tandem::kernels {

namespace mrs {
void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    const std::int64_t step = std::int64_t{p.ranks} * p.base_n;
    if (p.n % step != 0)
        fail_check(fmt::format("--gn {}: matmul_reduce_scatter needs N to be a multiple of ranks x base-n = {} x {} = {} "
                               "(rank r's output is column block r of C, made of whole GEMM tiles); nearest valid: {}",
                               p.n, p.ranks, p.base_n, step, nearest_multiple(p.n, step)));
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
        d.comm_payload_bytes = [](const OpParams& p) {  // the reduce-scatter's bytes per rank
            return p.ranks > 0 ? double(p.ranks - 1) / p.ranks * double(p.m) * p.n * dtype_bytes(p.out_dtype) : 0.0;
        };
        d.variants = {mrs::tile_owner_variant(), mrs::atomic_variant()};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
