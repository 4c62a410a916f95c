#pragma once
// A fused op written outside Tandem's registry and run through the API (docs/WRITE_A_KERNEL.md):
// GEMM + all-to-all. Every rank holds a row block of A (M/n x K) and all of B (K x N); rank r
// computes C_r = A_r x B (M/n x N) and sends column block c of it to rank c, which ends up with
// column block c of the whole C (M x N/n): the exchange that turns a row-sharded activation into
// a column-sharded one (sequence parallel -> tensor parallel, Ulysses-style attention, MoE).
//
// Kernels (gemm_all_to_all_kernels.cpp): a GEMM on the cube that raises a per-tile flag once a
// tile is in GM, and a push kernel on the vector cores that waits on each flag and stores the
// tile into its owner's output window; the push kernel ends when every rank's pushes landed.
#include <memory>

#include <tandem/kernel.hpp>

namespace gemm_all_to_all {

inline constexpr const char* kOpName = "gemm_all_to_all";

// The op's description, to hand to ctx.ops().add().
std::shared_ptr<const tandem::kernels::OpDesc> make_op();

}  // namespace gemm_all_to_all
