#include "host/ops/shard_shapes.hpp"

namespace tandem::host {

ShardShapes shard_shapes(const kernels::Sharding& s, const kernels::OpParams& p) {
    using kernels::Split;
    const int w = p.ranks;
    auto part = [w](int whole) { return whole / w; };  // the checks make every split whole
    ShardShapes sh;
    sh.k_total = s.k_per_rank ? p.k * w : p.k;
    sh.a_rows = s.a == Split::Rows ? part(p.m) : p.m;
    sh.a_cols = (s.a == Split::Cols) ? part(sh.k_total) : sh.k_total;
    sh.b_rows = s.b == Split::Cols ? part(p.n) : p.n;
    sh.b_cols = (s.k_per_rank || s.b == Split::Rows) ? part(sh.k_total) : sh.k_total;
    sh.out_rows = s.out_like_a ? sh.a_rows : p.m;
    sh.out_cols = s.out_like_a ? sh.a_cols : (s.out == Split::Cols ? part(p.n) : p.n);
    if (s.out_shape) {
        const std::array<int, 2> rc = s.out_shape(p);
        sh.out_rows = rc[0];
        sh.out_cols = rc[1];
    }
    sh.bias_len = p.bias == kernels::BiasKind::M ? p.m : (p.bias == kernels::BiasKind::N ? p.n : 0);
    return sh;
}

}  // namespace tandem::host
