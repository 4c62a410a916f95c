// gemm: C = A x B on one chip, with no communication: the baseline every fused op is compared
// with ("the matmul alone"), and a test of the cube model. With -n R, R independent chips each
// compute the same C = A x B (every rank holds all of A, B and C: no links are used, and every
// rank's C is verified against the one golden). kernels/gemm/README.md describes the variants.
#include "kernels/gemm/op.hpp"

#include "kernels/gemm/variants.hpp"

namespace tandem::kernels {

const OpDesc& gemm_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "gemm";
        d.title = "GEMM";
        d.doc = "C = A x B (+ bias) on each chip, no communication: every rank computes the same C (the matmul alone)";
        d.sharding = Sharding{Split::Replicated, Split::Replicated, false, Split::Replicated};
        d.comm_kind = kNoComm;
        d.comm_payload_bytes = [](const OpParams&) { return 0.0; };
        d.min_ranks = 1;
        d.variants = {gemm::pto_performance_variant(), gemm::tiled_variant()};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
