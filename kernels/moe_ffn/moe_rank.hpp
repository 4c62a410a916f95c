#pragma once
// One rank's view of moe_ffn's buffers and signals (README.md in this folder), shared by every
// schedule's kernels.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/common/device_barrier.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_slots.hpp"
#include "sim/exec/signal.hpp"
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
// The published Unpermute's column chunk (3 x 2048 + 1024 at K = 7168).
inline constexpr int kUnpermuteChunk = 2048;

// Sabotage for tests (OpParams::fault): a route left out of the sum, s1 not applied, a dispatch
// arrival raised before its rows have landed (the replicas), the signal words not reset between
// launches, so a later launch sees an earlier one's epochs (the replicas), a Dispatch pull that
// leaves the last row of each (expert, source) out (moe_dispatch).
enum class Fault { None, SkipLastRoute, DropScale1, FlagBeforeRows, StaleEpoch, DropLastPulledRow };

struct MoeRank {
    int rank = 0;
    std::shared_ptr<const RouteTables> tables;
    std::shared_ptr<const MoeSlots> slots;
    Fault fault = Fault::None;
    // Own data (local GM).
    GmTensor x, keys, probs;           // [M, K] bf16; [1, R] fp32 (-expert); [M, topK] fp32
    GmTensor sorted;                   // [2, R] fp32: the sorted keys and their routes (OneCore/MultiCore sorts)
    GmTensor row_of_route;             // [1, R] int32: expandedRowIdx
    GmTensor token_counts;             // [1, max(256, W E)] fp32: localTokenPerExpert
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
    std::vector<GmTensor> inbox;       // [max_recv, K+32] int8: rows peers push here (a layout with an inbox)
    // The signal words (moe_slots.hpp) at the same offset of every rank's window.
    std::vector<std::int64_t> window_bases;
    std::int64_t slots_offset = 0;
    DeviceBarrier after_reorder, after_combine;

    // Word i of slot array `index` in this rank's window, or in rank `peer`'s.
    SignalAddr slot(int index, int i = 0) const { return peer_slot(rank, index, i); }
    SignalAddr peer_slot(int peer, int index, int i = 0) const {
        return SignalAddr{peer, window_bases[static_cast<std::size_t>(peer)] + slots_offset + 4LL * (index + i)};
    }
};

}  // namespace tandem::kernels::moe
