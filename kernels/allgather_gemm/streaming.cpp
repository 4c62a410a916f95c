// allgather_gemm --variant streaming: the published kernel pair on two streams (comm on the AIV
// cores, compute on the AIC cores; README.md in this folder), with the seed's host views:
// compute-only marks every chunk ready from the host; sequential runs the comm kernel, then the
// compute kernel; pipelined launches both at once.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/allgather_gemm/allgather_gemm.hpp"
#include "kernels/allgather_gemm/variants.hpp"
#include "kernels/common/op_checks.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::ag {

namespace {

constexpr int kCommStream = 0;
constexpr int kComputeStream = 1;

AgGemmShape shape_of(const OpParams& p) {
    return AgGemmShape{p.ranks, p.m, p.k, p.n, p.base_m, p.base_n, p.knob("chunk_tiles").value_or(0)};
}

void validate(const OpParams& c, const BufferLimits& lim) {
    check_gemm_tile(c, lim, [&lim](double bm, double bn) { return gemm_tile_and_ping_pong_needs(bm, bn, lim); });
    const std::int64_t slice_rows = std::int64_t{c.ranks} * c.base_m;
    check_positive(kParamM, c.m, slice_rows, "n*base-m");
    check_positive(kParamK, c.k, c.base_n, "base-n");
    check_positive(kParamN, c.n, c.base_n, "base-n");
    // M % (n*base-m) == 0 implies the seed's M % base-m == 0: one check, one message.
    check_multiple(kParamM, c.m, slice_rows, "n*base-m",
                   fmt::format("each rank's slice is whole {}-row groups", c.base_m));
    check_multiple(kParamK, c.k, c.base_n, "base-n", "A is sent in base-m x base-n tiles");
    check_multiple(kParamN, c.n, c.base_n, "base-n", "C is computed in base-m x base-n tiles");
    if (const std::optional<int> chunk = c.knob("chunk_tiles")) {
        // A chunk is 1..T tiles, T = the tiles each source sends ((M/n/base-m) x (K/base-n)).
        const std::int64_t tiles = std::int64_t{c.m} / c.ranks / c.base_m * (c.k / c.base_n);
        if (*chunk < 1 || *chunk > tiles) {
            throw ParamError({ParamValue::knob("chunk_tiles", *chunk)},
                             fmt::format("a chunk holds 1..{} tiles here (each source sends {} tiles of {}x{})", tiles,
                                         tiles, c.base_m, c.base_n),
                             {ParamValue::knob("chunk_tiles", std::clamp<std::int64_t>(*chunk, 1, tiles))});
        }
    }
}

// Per chip: the window (a guard, room for the whole A, the flag region). B and C are the host's.
// In double (absurd shapes must give a message, not an overflow), with the flag region's
// layout (ready_queue.hpp) computed the same way.
double workspace_bytes(const OpParams& p) {
    const double tiles = static_cast<double>(p.m) / p.ranks / p.base_m * (static_cast<double>(p.k) / p.base_n);
    double chunk = p.knob("chunk_tiles").value_or(0);
    if (chunk <= 0) chunk = tiles <= (1 << 30) ? compute_chunk_size(static_cast<int>(tiles)) : 64;
    const double stride = std::ceil(std::ceil(tiles / chunk) / 16) * 16;
    const double flags_bytes = static_cast<double>(ChunkFlagMatrix::kHeaderBytes) + 4.0 * p.ranks * stride + 4.0 * p.ranks;
    return static_cast<double>(WindowLayout::kGuardBytes) + 2.0 * p.m * p.k + flags_bytes;
}

class AllGatherGemmRun final : public OpInstance {
public:
    explicit AllGatherGemmRun(const OpParams& p) : params_(p), tiling_(shape_of(p)), layout_(tiling_) {
        windows_.resize(static_cast<std::size_t>(p.ranks));
        window_bases_.resize(static_cast<std::size_t>(p.ranks));
        args_.reserve(static_cast<std::size_t>(p.ranks));
        for (int r = 0; r < p.ranks; ++r) args_.emplace_back(shape_of(p), r);
        a_slices_.resize(static_cast<std::size_t>(p.ranks));
    }

    std::vector<std::string> streams() const override { return {"comm", "compute"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        windows_[static_cast<std::size_t>(rank)] = &gm.allocate("window", layout_.total_bytes, /*shared=*/true);
        window_bases_[static_cast<std::size_t>(rank)] = windows_[static_cast<std::size_t>(rank)]->base;
    }

    void bind(int rank, const RankTensors& t) override {
        AgGemmArgs& a = args_[static_cast<std::size_t>(rank)];
        a.windows = windows_;
        a.b = &t.b.allocation();
        a.c = &t.out.allocation();
        a.comm_mode = params_.comm_mode == "ring" ? AgCommMode::Ring : AgCommMode::Mesh;
        a.fault = params_.fault == "skip_last_k_tile" ? ComputeFault::SkipLastKTile : ComputeFault::None;
        a.flag_before_data = params_.fault == "flag_before_data";
        a_slices_[static_cast<std::size_t>(rank)] = t.a;
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const AgGemmArgs& a = args_[static_cast<std::size_t>(rank)];
        const KernelLaunch comm = make_comm_kernel(a, params_.comm_blocks);
        const KernelLaunch compute = make_compute_kernel(a, params_.compute_blocks);
        ViewPlan plan;
        switch (kind) {
            case ViewKind::ComputeOnly:
                plan.reset = [this, rank](HostContext& host) { mark_all_ready(host, rank); };
                plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, compute}}}};
                break;
            case ViewKind::Sequential:
                plan.reset = [this, rank](HostContext& host) { reset_flags(host, rank); };
                plan.phases = {ViewPhase{PhaseRole::Comm, {}, {{kCommStream, comm}}},
                               ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, compute}}}};
                break;
            case ViewKind::Pipelined:
                // As the seed between iterations: flags to zero, the local slice of A copied into
                // the window, the other slices cleared (C is cleared by the host).
                plan.reset = [this, rank](HostContext& host) {
                    reset_flags(host, rank);
                    place_slices(host, rank);
                };
                plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kCommStream, comm}, {kComputeStream, compute}}}};
                break;
        }
        return plan;
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        return layout_.flags.name_of(address - window_bases_.at(static_cast<std::size_t>(rank)));
    }

private:
    std::int64_t window_base(int rank) const { return windows_[static_cast<std::size_t>(rank)]->base; }

    // Flags and summary counters to 0.
    void reset_flags(HostContext& host, int rank) const {
        const ChunkFlagMatrix& f = layout_.flags;
        host.write_signals(window_base(rank) + f.flag_offset(0, 0), f.ranks * f.stride, 0);
        host.write_signals(window_base(rank) + f.summary_offset(0), f.ranks, 0);
    }

    // Compute-only: every chunk of every source marked ready from the host.
    void mark_all_ready(HostContext& host, int rank) const {
        const ChunkFlagMatrix& f = layout_.flags;
        for (int src = 0; src < f.ranks; ++src) host.write_signals(window_base(rank) + f.flag_offset(src, 0), f.chunks, 1);
        host.write_signals(window_base(rank) + f.summary_offset(0), f.ranks, f.chunks);
    }

    void place_slices(HostContext& host, int rank) const {
        const GmTensor whole = args_[static_cast<std::size_t>(rank)].a_in_window(rank);
        for (int src = 0; src < params_.ranks; ++src) {
            const GmTensor slice = whole.sub(src * tiling_.rows_per_rank, 0, tiling_.rows_per_rank, params_.k);
            if (src == rank) host.copy_device(slice, a_slices_[static_cast<std::size_t>(rank)]);
            else host.zero_device(slice);
        }
    }

    OpParams params_;
    AgGemmTiling tiling_;
    WindowLayout layout_;
    std::vector<const GmAllocation*> windows_;
    std::vector<std::int64_t> window_bases_;  // for signal_name, which runs after the cluster is gone
    std::vector<AgGemmArgs> args_;
    std::vector<GmTensor> a_slices_;
};

}  // namespace

VariantDesc streaming_variant() {
    VariantDesc v;
    v.name = "streaming";
    v.doc = "the published kernel pair: comm kernel (AIV) sends chunks with TPUT + TNOTIFY, compute kernel (AIC) "
            "does local rows first and consumes remote chunks as their flags are set";
    v.constraints = "M % (n*base-m) == 0, K % base-n == 0, N % base-n == 0; fp16 in, fp32 out; no bias";
    v.comm_modes = {"mesh", "ring"};
    v.faults = {"skip_last_k_tile", "flag_before_data"};
    v.knobs = {KnobDesc{"chunk_tiles", {}, "tiles per chunk (default: the published rule, 64..128 chunks per source)",
                        {1, 2, 4, 8, 16, 32, 64}}};
    v.validate = validate;
    v.workspace_bytes = workspace_bytes;
    v.effective_knobs = [](const OpParams& p) {
        return std::map<std::string, int>{{"chunk_tiles", AgGemmTiling(shape_of(p)).chunk_size}};
    };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<AllGatherGemmRun>(p); };
    return v;
}

}  // namespace tandem::kernels::ag
