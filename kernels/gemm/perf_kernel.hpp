#pragma once
// GemmPerformance: pto-isa's gemm_performance kernel (kernels/gemm/README.md) in Tandem's tile
// ISA, its structure and flags as published.
#include "kernels/gemm/perf_tiling.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels::gemm {

// A deliberate bug a test asks for, to prove verification catches a wrong kernel.
enum class PerfFault {
    None,
    SkipLastKStep,  // every tile leaves out its last TMATMUL_ACC (flags and moves unchanged)
};

struct PerfArgs {
    PerfTiling tiling;
    GmTensor a;  // m x k fp16, ND
    GmTensor b;  // k x n fp16, DN (stored as n x k)
    GmTensor c;  // m x n fp32, ND
    PerfFault fault = PerfFault::None;
};

// The AIC launch of PerfTiling::kBlocks blocks (more blocks than AIC cores run in waves).
KernelLaunch make_gemm_performance_kernel(const PerfArgs& args);

}  // namespace tandem::kernels::gemm
