// AllGather+GEMM described for the shared host (the seed; README.md in this folder): A split by
// rows over the ranks, B replicated, every rank computes all of C (fp32). One variant,
// `streaming` (streaming.cpp).
#include "kernels/allgather_gemm/op.hpp"

#include "kernels/allgather_gemm/variants.hpp"

namespace tandem::kernels {

const OpDesc& allgather_gemm_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "allgather_gemm";
        d.title = "AllGather GEMM";
        d.doc = "the Ascend seed: A split by rows, B replicated, every rank computes C = A x B (fp32)";
        d.sharding = Sharding{Split::Rows, Split::Replicated, false, Split::Replicated};
        d.comm_kind = "allgather";
        d.comm_payload_bytes = [](const OpParams& p) {  // (M/n) x K fp16 from each of n-1 peers (docs/RESULTS.md)
            return p.ranks > 0 ? double(p.m) / p.ranks * p.k * 2 * (p.ranks - 1) : 0.0;
        };
        // M whole base-m row groups per rank; N and K whole tiles (the seed pads nothing).
        d.test_shape = [](int ranks) { return RunShape{ranks, 256 * ranks, 512, 512, 128, 256, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 1024};
        d.scale_shape = RunShape{64, 8192, 4096, 4096};
        d.variants = {ag::streaming_variant()};
        d.seed_format = SeedFormat{"AllGather+GEMM", "AllGather bandwidth", true};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
