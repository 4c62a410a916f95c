#pragma once
// AllGather+GEMM: the communication kernel (AIV) and the streaming compute kernel (AIC), as
// published in pto-isa's kernels/manual/a2a3/allgather_gemm, written against Tandem's tile ISA.
#include <vector>

#include "kernels/allgather_gemm/ag_layout.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/global_memory.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels {

enum class AgCommMode { Mesh, Ring };

// Test-only sabotage of the compute kernel, to prove that verification catches a wrong kernel.
enum class ComputeFault { None, SkipLastKTile };

// What the kernels of one rank see (the device-side arguments of the published kernels).
struct AgGemmArgs {
    AgGemmTiling tiling;
    WindowLayout window;
    int my_rank = 0;
    std::vector<const GmAllocation*> windows;  // every rank's window; peers address each other's
    const GmAllocation* b = nullptr;            // this rank's B, stored transposed (N x K, "DN")
    const GmAllocation* c = nullptr;            // this rank's C (M x N fp32)
    AgCommMode comm_mode = AgCommMode::Mesh;
    ComputeFault fault = ComputeFault::None;
    // Test-only sabotage of the comm kernel: each chunk's flags are raised before its TPUTs, so a
    // peer may read the chunk before it lands (a race the timing may hide: --sanitize names it).
    bool flag_before_data = false;

    AgGemmArgs(const AgGemmShape& shape, int rank) : tiling(shape), window(tiling), my_rank(rank) {}

    GmTensor a_in_window(int rank) const;  // M x K fp16 in `rank`'s window
    GmTensor b_matrix() const;             // K x N fp16 view of the DN-stored B
    GmTensor c_matrix() const;             // M x N fp32
    std::int64_t window_base(int rank) const { return windows[static_cast<std::size_t>(rank)]->base; }
};

// RingCommStreamingKernel (published name; it sends full-mesh) or the forwarding-ring variant.
KernelLaunch make_comm_kernel(const AgGemmArgs& args, int comm_blocks);
// AllGatherGemmComputeStreamingKernel.
KernelLaunch make_compute_kernel(const AgGemmArgs& args, int compute_blocks);

}  // namespace tandem::kernels
