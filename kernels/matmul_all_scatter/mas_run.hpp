#pragma once
// What every matmul_all_scatter variant shares: the sizes (rank r's column block of C is
// M x N/W, whole base-n tiles; its readiness tiles are the GEMM's output tiles), the workspace
// (per-tile ready flags for the variants that hand tiles over, and the stream-K partials and
// counters), the checks, and the OpInstance with its reference views:
//   compute-only: the GEMM kernel alone (own output only; MIX stream-K under stream_k/hybrid);
//   sequential:   that GEMM kernel, then the scatter kernel (an all-gather of C's column blocks).
// A variant supplies its pipelined view.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/gemm_block_push.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mas {

inline constexpr int kGemmStream = 0;
inline constexpr int kCommStream = 1;

// The specialized MIX kernel's clusters: all of them (--total-blocks), those computing the GEMM
// (--gemm-blocks), and how many the chip holds at once.
int total_blocks(const OpParams& p);
int gemm_blocks(const OpParams& p);
int clusters_of(const BufferLimits& lim);

// The checks every variant makes (the GEMM tile, the output dtype, N in whole-tile column
// blocks, the comm tile).
void validate_common(const OpParams& p, const BufferLimits& lim);
double workspace_bytes(const OpParams& p);

class MasRun : public OpInstance {
public:
    explicit MasRun(const OpParams& p);

    std::vector<std::string> streams() const override { return {"gemm", "comm"}; }
    void allocate_workspace(int rank, GlobalMemory& gm) override;
    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }
    ViewPlan view(ViewKind kind, int rank) const override;
    std::string signal_name(int rank, std::int64_t address) const override;

protected:
    virtual ViewPlan pipelined_view(int rank) const = 0;

    const OpParams& params() const { return p_; }
    bool stream_k() const { return p_.schedule != "data_parallel"; }
    // The rank's GEMM over its column block; `flagged`: each stored tile raises its ready flag.
    GemmBlockArgs args(int rank, bool flagged) const;
    // The stream-K GEMM of `blocks` blocks over `a` (its partials and counters in the workspace).
    StreamKGemm stream_k_gemm(const GemmBlockArgs& a, int rank, int blocks) const;
    // The GEMM of the reference views, its stream-K counters' reset, and the scatter kernel.
    StreamKGemm local_stream_k(int rank) const;
    KernelLaunch local_gemm(int rank) const;
    HostAction reset_local_stream_k(int rank) const;
    KernelLaunch scatter(int rank) const;
    void reset_flags(HostContext& host, int rank) const;

private:
    OpParams p_;
    std::vector<RankTensors> tensors_;
    std::vector<std::int64_t> flags_;            // base address of each rank's flags (-1: none)
    std::vector<const GmAllocation*> stream_k_;  // each rank's stream-K partials and counters
    std::vector<std::int64_t> stream_k_base_;
};

}  // namespace tandem::kernels::mas
