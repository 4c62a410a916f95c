#pragma once
// moe_ffn's stage kernels (README.md in this folder). Each stage is a Task run by every block of
// its launch on one rank; stages hand experts to each other through per-expert counters in the
// rank's window (a stage adds 1 per block once its share of expert e has landed; the next stage
// waits until all blocks of the previous one have added). The bulk variant runs the stages one
// launch after another (the counters are then already full when a stage starts); per_expert
// launches them together on their own core groups, so expert e+1 is dispatched while expert e
// is in GMM1, and so on.
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/device_barrier.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "sim/exec/logical_process.hpp"
#include "sim/mem/gm_tensor.hpp"

namespace tandem::kernels::moe {

// The GMM tiles (the published kernel's 128 x 256 output tiles, K in L1 steps of 512 and L0
// steps of 128).
inline constexpr int kTileM = 128;
inline constexpr int kTileN = 256;
inline constexpr int kStepL1 = 512;
inline constexpr int kStepL0 = 128;
// The published FrontReorder's largest sort in UB (192 KiB / 32 B).
inline constexpr int kSortChunk = 6144;

// Sabotage for tests (OpParams::fault).
enum class Fault { None, SkipLastRoute, DropScale1 };

// One rank's view of every buffer (README.md "Buffers").
struct MoeRank {
    int rank = 0;
    std::shared_ptr<const RouteTables> tables;
    Fault fault = Fault::None;
    // Own data (local GM).
    GmTensor x, keys, probs;           // [M, K] bf16; [1, R] fp32 (-expert); [M, topK] fp32
    std::vector<GmTensor> w1, w2;      // per local expert: [K, N], [N/2, K] int8
    GmTensor scale1, scale2;           // [E, N], [E, K] fp32
    GmTensor recv;                     // [max_recv, K+32] int8: received packed rows (gmA)
    GmTensor recv_scale;               // the same bytes as fp32 [max_recv, (K+32)/4]: s1 at column K/4
    GmTensor gmm1_out;                 // [max_recv, N] fp16
    GmTensor swiglu_q;                 // [max_recv, N/2] int8
    GmTensor swiglu_s;                 // [max_recv, 8] fp32 (s2 replicated)
    GmTensor gmm2_out;                 // [max_recv, K] fp16
    GmTensor out;                      // the host's output [M, K] fp16
    // Every rank's window: packed rows in expert-sorted order, the combined rows, the count rows.
    std::vector<GmTensor> packed;      // [R, K+32] int8
    std::vector<GmTensor> combined;    // [R, K] fp16
    std::vector<GmTensor> count_rows;  // [W, 256] int32 (row s: what rank s sends here)
    // This rank's per-expert counters (4 x E words) and the two all-rank barriers.
    SignalAddr dispatched, gmm1_done, swiglu_done, gmm2_done;  // index + 4*e
    DeviceBarrier after_reorder, after_combine;
};

SignalAddr counter(SignalAddr base, int e);

// Block counts of each stage (for the counters' targets).
struct StageBlocks {
    int reorder = 1, dispatch = 1, gmm1 = 1, swiglu = 1, gmm2 = 1, combine = 1, unpermute = 1;
};

KernelLaunch front_reorder_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_dispatch);
KernelLaunch dispatch_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch gmm1_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch swiglu_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch gmm2_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);
KernelLaunch combine_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b, bool then_unpermute);
KernelLaunch unpermute_kernel(const std::shared_ptr<const MoeRank>& a, const StageBlocks& b);

}  // namespace tandem::kernels::moe
