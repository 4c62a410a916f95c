// matmul_all_scatter described for the shared host (docs/ops/matmul_all_scatter.md; Iris's
// "GEMM + All scatter"):
// A replicated, B split by columns, every rank gets all of C. Rank r computes its column block
// C[:, r*N/W ..) and sends it to every rank. Variants, as Iris names them (one file each,
// README.md in this folder):
//   bulk_sync          the GEMM kernel, then (same stream: the kernel boundary is the barrier)
//                      the scatter kernel;
//   fused_sequential   one persistent AIC kernel storing each finished tile into every rank's
//                      output straight from L0C;
//   producer_consumer  GEMM (AIC) and scatter (AIV) kernels on two streams, per-tile flags;
//   specialized        one MIX kernel, its clusters split between GEMM and scatter
//                      (--gemm-blocks of --total-blocks; Iris's --total_sms is the total).
// Views (mas_run.hpp): compute-only is the GEMM kernel alone (own output only); sequential is
// the GEMM kernel, then the scatter kernel (an all-gather of C's column blocks), each its own phase.
#include "kernels/matmul_all_scatter/op.hpp"

#include "kernels/common/comm_tile_knobs.hpp"
#include "kernels/common/fused_gemm_defaults.hpp"
#include "kernels/matmul_all_scatter/mas_run.hpp"
#include "kernels/matmul_all_scatter/variants.hpp"

namespace tandem::kernels {

VariantDesc mas::mas_defaults() {
    VariantDesc v = fused_gemm_defaults();
    v.constraints = "N % (n*base-n) == 0 (M, K padded); fp16/bf16/fp32/int8 in (int8: fp32 out, no bias), fp32 or input-dtype out; bias none/m/n";
    v.output_in_window = true;  // peers store their column blocks into it
    v.faults = {"skip_last_k_panel", "skip_peer"};
    v.validate = validate_common;
    v.workspace_bytes = workspace_bytes;
    v.knobs = comm_tile_knobs("scatter");
    v.effective_knobs = comm_tile_effective_knobs;
    return v;
}

const OpDesc& matmul_all_scatter_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "matmul_all_scatter";
        d.title = "GEMM + AllScatter";
        d.doc = "A replicated, B split by columns; each rank computes its column block of C and sends it to every rank";
        d.sharding = Sharding{Split::Replicated, Split::Cols, false, Split::Replicated};
        d.comm_kind = "allscatter";
        d.comm_payload_bytes = [](const OpParams& p) {  // the M x N/W blocks of the n-1 peers
            return p.ranks > 0 ? double(p.m) * (double(p.n) / p.ranks) * dtype_bytes(p.out_dtype) * (p.ranks - 1) : 0.0;
        };
        // M and K ragged (padded); 5 tiles per column block over 4 blocks, so that stream-K
        // splits tiles (and specialized's 3 GEMM clusters too).
        d.test_shape = [](int ranks) { return RunShape{ranks, 600, 300, 256 * ranks, 128, 256, 4, 4}; };
        d.bench_shape = RunShape{2, 2048, 2048, 2048};
        d.scale_shape = RunShape{64, 4096, 4096, 16384};
        const VariantDesc defaults = mas::mas_defaults();
        d.variants = {mas::bulk_sync_variant(defaults), mas::fused_sequential_variant(defaults),
                      mas::producer_consumer_variant(defaults), mas::specialized_variant(defaults)};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
