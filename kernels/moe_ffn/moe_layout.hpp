#pragma once
// Where moe_ffn's buffers sit in each rank's window and local memory, and one rank's MoeRank
// bound over them: shared by moe_ffn and by the ops that run its stages alone (moe_dispatch,
// moe_combine), so that all three move the same rows through the same addresses.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/device_barrier.hpp"
#include "kernels/moe_ffn/moe_rank.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::moe {

// Offsets of the window (same on every rank) and of the local buffers.
// Without `ffn` (the stages alone) the experts' weights, scales and GMM1/SwiGLU buffers take no room.
// With `inbox` the window also holds a received row per route the rank's experts receive, where
// peers store them (moe_dispatch's `push`: a remote store lands only in a peer's window).
struct MoeLayout {
    explicit MoeLayout(const RouteTables& t, bool ffn = true, bool inbox = false);
    MoeSlots slots;
    bool ffn = true;
    bool has_inbox = false;
    std::int64_t packed, combined, count_rows, counters, inbox, window;
    DeviceBarrierLayout barrier1, barrier2;
    std::int64_t keys, probs, sorted, row_of_route, token_counts, w1, w2, scale1, scale2, recv, gmm1_out, swiglu_q, swiglu_s,
        gmm2_out, local;
    int global_experts = 0;
    int token_count_cols() const { return std::max(256, global_experts); }
    // The name of a signal word at `offset` bytes into the window ("gmm1_ready[3]", a barrier's),
    // or empty.
    std::string signal_name(int rank, std::int64_t offset) const;
};

// Every rank's window and local allocation, as allocate_workspace makes them.
struct MoeAllocations {
    explicit MoeAllocations(int ranks);
    // Rank `rank`'s window (shared) and local memory; returns the local one.
    const GmAllocation& allocate(int rank, GlobalMemory& gm, const MoeLayout& lay);
    std::vector<const GmAllocation*> window;  // [rank]
    std::vector<const GmAllocation*> local;   // [rank]
    std::vector<std::int64_t> window_bases;   // [rank]
};

// Rank `rank`'s view of every buffer (x is the caller's A, checked against the shape: `op` names
// the op in the message).
std::shared_ptr<MoeRank> bind_moe_rank(const char* op, int rank, const RankTensors& t, const MoeLayout& lay,
                                       const MoeAllocations& mem, std::shared_ptr<const RouteTables> tables,
                                       std::shared_ptr<const MoeSlots> slots, Fault fault);

// The op's inputs besides x, written where the kernels read them (functional runs): the route
// keys, the gate weights, the experts' weights and scales.
void fill_moe_inputs(const RouteTables& t, const MoeLayout& lay, int rank, const GmAllocation& local);

}  // namespace tandem::kernels::moe
