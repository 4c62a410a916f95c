#pragma once
// What both gemm variants share: one stream ("compute") and one kernel, the same in every view.
// There is no communication, so the sequential view is the kernel alone (its time counts as the
// sequential compute, the comm part is 0) and so is the pipelined view: the three views time
// the same launch, each from its own host barrier (kernels/gemm/README.md, "Views").
#include <string>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels::gemm {

inline constexpr int kComputeStream = 0;

class GemmRun : public OpInstance {
public:
    explicit GemmRun(const OpParams& p) : params_(p), tensors_(static_cast<std::size_t>(p.ranks)) {}

    std::vector<std::string> streams() const override { return {"compute"}; }
    void allocate_workspace(int, GlobalMemory&) override {}
    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }
    ViewPlan view(ViewKind kind, int rank) const override;

protected:
    // The variant's kernel on `rank`, and its untimed host reset before each view (none by default).
    virtual KernelLaunch kernel(int rank) const = 0;
    virtual HostAction reset(int) const { return {}; }

    const OpParams& params() const { return params_; }
    const RankTensors& tensors(int rank) const { return tensors_[static_cast<std::size_t>(rank)]; }

private:
    OpParams params_;
    std::vector<RankTensors> tensors_;
};

}  // namespace tandem::kernels::gemm
