#pragma once
// What every matmul_all_reduce variant's run shares: the workspace (the baseline all-reduce's
// inbox and flags, then the variant's own region), the rank tensors, and the two reference views:
//   compute-only: the GEMM part alone (the variant's tiles and blocks), partials stored locally;
//   sequential:   that GEMM kernel, then the HCCL-style all-reduce (kernels/common/collectives,
//                 mesh on a full mesh, ring on rings) in place on the output.
// A variant supplies its pipelined view. Under --schedule stream_k or hybrid the GEMM part is
// the shared stream-K MIX kernel (kernels/common/stream_k_gemm.hpp), its partials and counters in
// a region of the workspace after the variant's.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/collectives/collective.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/common/summed_gemm.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::mar {

inline constexpr int kComputeStream = 0;
inline constexpr int kCommStream = 1;

// The output's padded shape (M to base_m, N to base_n, as VariantDesc::padding asks).
int padded_m(const OpParams& p);
int padded_n(const OpParams& p);
// The baseline all-reduce's layout on the padded output.
collectives::CollectiveLayout baseline_layout(const OpParams& p);

class MarRun : public OpInstance {
public:
    // `variant_bytes`: the variant's own region of the workspace.
    MarRun(const OpParams& p, std::int64_t variant_bytes);

    std::vector<std::string> streams() const override { return {"compute", "comm"}; }
    void allocate_workspace(int rank, GlobalMemory& gm) override;
    void bind(int rank, const RankTensors& t) override;
    ViewPlan view(ViewKind kind, int rank) const override;
    // The stream-K partial flags ("partial_ready[slot=7]"), so a fix-up wait names its partial.
    std::string signal_name(int rank, std::int64_t address) const override;

protected:
    virtual ViewPlan pipelined_view(int rank) const = 0;

    const OpParams& params() const { return params_; }
    const RankTensors& tensors(int rank) const { return tensors_[static_cast<std::size_t>(rank)]; }
    std::vector<GmTensor> outputs() const;  // every rank's output (in its window)
    SummedGemm gemm(int rank) const { return summed_gemm_of(params_, tensors(rank), rank); }
    // The variant's region on `rank`: its allocation and where the region starts in it.
    const GmAllocation& workspace(int rank) const { return *workspace_[static_cast<std::size_t>(rank)]; }
    std::int64_t variant_offset() const { return variant_offset_; }
    collectives::CollectiveArgs baseline_args(int rank) const;
    // Stream-K (--schedule stream_k|hybrid): the rank's GEMM part and its counters' reset.
    bool stream_k() const { return params_.schedule != "data_parallel"; }
    StreamKGemm stream_k_gemm(int rank) const;
    HostAction reset_stream_k(int rank) const;

private:
    OpParams params_;
    collectives::CollectiveLayout layout_;
    std::int64_t variant_offset_;
    std::int64_t variant_bytes_;
    std::int64_t stream_k_offset_;
    std::vector<const GmAllocation*> workspace_;
    std::vector<std::int64_t> workspace_base_;  // saved at allocation (signal_name runs after the cluster)
    std::vector<RankTensors> tensors_;
};

// The workspace bytes per chip of a variant whose own region is `variant_bytes` (and the
// stream-K region when the schedule needs it).
double mar_workspace_bytes(const OpParams& p, double variant_bytes);
// The schedule of the rank's GEMM part.
GemmSchedule mar_schedule(const OpParams& p);

}  // namespace tandem::kernels::mar
