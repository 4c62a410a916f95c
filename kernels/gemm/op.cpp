// gemm: C = A x B on one chip, with no communication: the baseline every fused op is compared
// with ("the matmul alone"), and a test of the cube model. With -n R, R independent chips each
// compute the same C = A x B (every rank holds all of A, B and C: no links are used, and every
// rank's C is verified against the one golden). kernels/gemm/README.md describes the variants.
#include "kernels/gemm/op.hpp"

#include "kernels/common/fused_gemm_defaults.hpp"
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
        // Ragged (padded to 3 x 2 tiles: 6 over 4 blocks, so that stream-K splits tiles), 3 K panels.
        d.test_shape = [](int ranks) { return RunShape{ranks, 300, 520, 500, 128, 256, 4, std::nullopt}; };
        // N a multiple of pto_performance's 6 x 256.
        d.bench_shape = RunShape{1, 2048, 2048, 3072};
        d.scale_shape = RunShape{64, 3072, 3072, 3072};
        VariantDesc defaults = fused_gemm_defaults();
        defaults.default_comm_blocks = [](const BufferLimits&) { return 0; };  // no comm kernel
        d.variants = {gemm::pto_performance_variant(defaults), gemm::tiled_variant(defaults)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
