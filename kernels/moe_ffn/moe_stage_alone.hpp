#pragma once
// What moe_dispatch and moe_combine share: they run moe_ffn's stages alone, on the AIVs, over
// moe_ffn's buffers and routing. Their checks, their variant's common description and the
// OpInstance parts that do not depend on which stages run.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/moe_ffn/moe_kernels.hpp"
#include "kernels/moe_ffn/moe_layout.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels::moe {

// M and K as the stages take them, the routing knobs, the stages' UB (`ub_bytes(shape)`, `holds`
// saying what it holds) and the comm blocks (every block resident for the all-rank barrier that
// `barrier_after` names).
void check_stage_alone(const OpParams& p, const BufferLimits& lim, std::int64_t (*ub_bytes)(const MoeShape&),
                       const char* holds, const char* barrier_after);

// What both stage-alone ops are: x (A) is the rank's own [M, K] (the output has its shape unless
// the op sets `sharding.out_shape`; B is not read), an all-to-all-v moving `payload_bytes` into
// each rank, tested at 16 tokens and measured at the published 128 tokens with K 7168.
OpDesc stage_alone_op(std::string name, std::string title, std::string doc,
                      std::function<double(const OpParams&)> payload_bytes);

// A variant of a stage-alone op: x bf16 or fp16, moe_ffn's knobs, its workspace without the FFN's
// buffers (with an inbox in the window if `inbox`), the default shape of the measured runs (128
// tokens, K 7168; N is not read).
VariantDesc stage_alone_variant(std::string name, std::string doc, std::string constraints, bool inbox = false);

// The run's common part: the route tables, the window and local buffers without the FFN's, one
// MoeRank per rank, every AIV block on both stages (moe_ffn's `bulk` pieces), the signal words'
// names and the stages'.
class MoeStageAloneRun : public OpInstance {
public:
    // `inbox`: the window holds the rows peers push (MoeLayout's inbox).
    MoeStageAloneRun(const OpParams& p, const char* op, Fault fault, bool inbox = false);

    std::vector<std::string> stage_names() const override;
    std::string signal_name(int rank, std::int64_t address) const override;
    void allocate_workspace(int rank, GlobalMemory& gm) override;
    void bind(int rank, const RankTensors& t) override;

protected:
    // Called by allocate_workspace in a functional run, once the rank's local memory is filled
    // with moe_ffn's generated inputs.
    virtual void fill_local(int rank, const GmAllocation& local) const { (void)rank, (void)local; }
    // Called by bind with the rank's MoeRank before it is kept.
    virtual void adapt(MoeRank& a, const RankTensors& t) const { (void)a, (void)t; }
    // The untimed reset every view starts with: the signal words zeroed, the barriers reset.
    void reset_signals(HostContext& host, int rank) const;
    // One phase of one launch on the op's only stream.
    static ViewPhase phase(PhaseRole role, KernelLaunch k);

    const char* op_;
    Fault fault_;
    bool functional_ = false;
    std::shared_ptr<RouteTables> tables_;
    MoeLayout lay_;
    std::shared_ptr<const MoeSlots> slots_;
    MoeAllocations mem_;
    StageBlocks blocks_;
    std::vector<std::shared_ptr<const MoeRank>> ranks_;
};

}  // namespace tandem::kernels::moe
