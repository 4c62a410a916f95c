#pragma once
// What both replicas of Ascend's GEMM+AllReduce example (ascend/ and ascend_subtile/) share as
// variants of matmul_all_reduce: their description's defaults, their shape, their checks of the
// shape, and their OpInstance's buffers, host resets and views.
//   * every rank its own A_i (M x K) and the same B; fp16 in, fp16 out, no bias; M padded to
//     base-m and N to base-n, K not (the published K loop has no tail); one AIV per AIC;
//   * buffers per rank: the signal words in the window (workspace), gemm_output (M x N fp16,
//     local GM, workspace), one ready queue per compute block (local GM, workspace), and
//     reduced_output (M x N fp16): the op's output itself, which the host places in the window
//     (VariantDesc::output_in_window), at the same offset on every rank;
//   * before every view: queues rewritten; gemm_output, reduced_output and the signal words
//     zeroed (the data resets are no-ops in timing-only mode);
//   * compute-only: the compute kernel alone; sequential: compute, synchronize, comm,
//     synchronize; pipelined: both launched, then both synchronized (compute, then comm). The
//     older example's comm launcher synchronizes the comm stream inside it, so its pipelined view
//     synchronizes the comm stream once more than the newer one's (comm_launch_synchronizes).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/spsc_ready_queue.hpp"
#include "kernels/matmul_all_reduce/ascend/ar_tiling.hpp"
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// The op's defaults refined into what both replicas run as (above).
VariantDesc ascend_replica_defaults(const VariantDesc& op_defaults);

// The published shape of a run: M and N padded to whole tiles.
AscendArShape ascend_shape_of(const OpParams& p);

// The output tiles of a run (M and N padded to whole tiles), and the workspace bytes both
// replicas hold beside their signals (`signal_bytes`): the fp16 partial output and each compute
// block's ready queue, as long as its share of the tiles (an estimate before validation: it
// takes any OpParams).
double ascend_output_tiles(const OpParams& p);
double ascend_workspace_bytes(const OpParams& p, double signal_bytes);

// M, K, N positive and K whole base-n panels (the published K loop loads 4 slices of base-n/4).
void check_ascend_shape(const OpParams& p);

class AscendReplicaRun : public OpInstance {
public:
    AscendReplicaRun(const OpParams& p, std::int64_t signal_bytes, int queue_capacity);

    std::vector<std::string> streams() const override { return {"compute", "comm"}; }
    void allocate_workspace(int rank, GlobalMemory& gm) override;
    void bind(int rank, const RankTensors& t) override;
    ViewPlan view(ViewKind kind, int rank) const override;
    std::string signal_name(int rank, std::int64_t address) const override;

protected:
    struct RankBuffers {
        std::int64_t signal_base = 0;  // kept for signal_name, which runs after the cluster is gone
        std::int64_t queue_base = 0;
        GmTensor gemm_output;
        GmTensor a;
        GmTensor b;
        GmTensor reduced_output;
    };

    // The replica's compute and comm kernels on `rank`.
    virtual std::pair<KernelLaunch, KernelLaunch> kernels(int rank) const = 0;
    // Whether the published host's comm launcher synchronizes the comm stream before it returns
    // (in the pipelined view: before the host synchronizes both streams). The older example's
    // launcher does; the newer one launches the comm kernel without it (launchCommAsync).
    virtual bool comm_launch_synchronizes() const { return false; }
    // Its signal words: zeroed before every view; named in traces (offset from their base).
    virtual void reset_signals(HostContext& host, std::int64_t base) const = 0;
    virtual std::string signal_name_at(int rank, std::int64_t offset) const = 0;

    const OpParams& params() const { return params_; }
    const std::vector<RankBuffers>& ranks() const { return ranks_; }
    const SpscQueueSet& queues() const { return queues_; }
    // What both replicas' kernels see of `rank` (AscendArArgs or SubtileArArgs: the published
    // device arguments): its operands, partial output and ready queues, every rank's result.
    template <class Args>
    void set_rank_operands(Args& args, int rank) const {
        const RankBuffers& mine = ranks_[static_cast<std::size_t>(rank)];
        args.my_rank = rank;
        args.a = mine.a;
        args.b = mine.b;
        args.gemm_output = mine.gemm_output;
        args.queues = queues_;
        args.queue_base = mine.queue_base;
        for (const RankBuffers& r : ranks_) args.reduced_output.push_back(r.reduced_output);
    }

private:
    void reset(HostContext& host, int rank) const;

    OpParams params_;
    std::int64_t signal_bytes_;
    SpscQueueSet queues_;
    std::vector<RankBuffers> ranks_;
};

}  // namespace tandem::kernels
