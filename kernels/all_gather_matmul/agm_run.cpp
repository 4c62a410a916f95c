// all_gather_matmul's OpInstance, one for its three variants (they differ in the kernels they
// launch), its checks and its workspace. --gk is the K of the whole product (Iris: B is K x N
// with K = K_local * world_size); rank r holds A[:, r*K/n : (r+1)*K/n].
// Views (docs/ops/all_gather_matmul.md): compute-only is the variant's GEMM with every shard in place (pull: the local
// GEMM on a complete A; push and staged: their consumer with every flag raised by the host);
// sequential is the baseline all-gather of the column shards (kernels/common/collectives) and
// then the local GEMM; pipelined is the variant.
#include "kernels/all_gather_matmul/agm_run.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/all_gather_matmul/agm_kernels.hpp"
#include "kernels/common/collectives/all_gather_cols.hpp"
#include "kernels/common/panel_k.hpp"
#include "kernels/common/op_checks.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::agm {

namespace {

constexpr int kCommStream = 0;
constexpr int kComputeStream = 1;
constexpr int kDefaultStages = 2;

enum class AgmVariant : std::uint8_t { Pull, Push, Staged };

AgmVariant variant_of(const OpParams& p) {
    if (p.variant == "push") return AgmVariant::Push;
    if (p.variant == "staged") return AgmVariant::Staged;
    return AgmVariant::Pull;
}

// A K tile is one cube K panel deep (kernels/common/panel_k.hpp): base-n, or base-n/2 for fp32.
int k_tile_of(const OpParams& p) { return panel_k_for(p.base_n, p.dtype); }
int k_tiles_of(const OpParams& p) { return p.ranks > 0 && k_tile_of(p) > 0 ? p.k / p.ranks / k_tile_of(p) : 0; }

// staged's default: groups of up to 4 K tiles (a flag and a pipe barrier per 4 tiles amortize
// the release cost; smaller groups let the GEMM start sooner; --tune searches it).
}  // namespace

int k_per_flag_of(const OpParams& p) {
    if (variant_of(p) != AgmVariant::Staged) return 1;
    return p.knob("k_per_flag").value_or(std::clamp(k_tiles_of(p), 1, 4));
}

int stages_of(const OpParams& p) { return p.knob("stages").value_or(kDefaultStages); }

namespace {

// The sequential view's all-gather: mesh on a full mesh, ring on a ring profile (as HCCL picks).
collectives::CollectiveAlgo baseline_algo(const OpParams& p) { return collectives::collective_algo_for(p.topology); }

AgmShape shape_of(const OpParams& p) {
    return AgmShape{p.ranks, p.m, p.k, p.n, p.base_m, p.base_n, k_per_flag_of(p),
                    p.dtype, all_gather_cols_arrival_words(baseline_algo(p), p.ranks)};
}

AgmFault fault_of(const std::string& f) {
    if (f == "skip_remote_k_tile") return AgmFault::SkipRemoteKTile;
    if (f == "skip_inbox_store") return AgmFault::SkipInboxStore;
    if (f == "skip_staged_copy") return AgmFault::SkipStagedCopy;
    return AgmFault::None;
}

}  // namespace

void validate(const OpParams& c, const BufferLimits& lim) {
    const AgmVariant v = variant_of(c);
    const int ubTiles = v == AgmVariant::Staged ? std::max(2, stages_of(c)) : 2;
    const double elem = dtype_bytes(c.dtype);
    const bool fp32 = elem == 4;
    const bool int8 = elem == 1;
    check_int8_rules(c);
    // The stages' own bound first: the UB check of the tile below counts them, and would blame
    // the tile for --stages 1000 (a tile that is not positive is refused there).
    if (v == AgmVariant::Staged && c.base_m > 0 && c.base_n > 0) {
        const std::int64_t tile_bytes = std::int64_t{c.base_m} * k_tile_of(c) * dtype_bytes(c.dtype);
        const int max_stages = static_cast<int>(std::clamp<std::int64_t>(lim.ub_bytes / std::max<std::int64_t>(1, tile_bytes), 1, 8));
        check_knob_range(c, "stages", 1, max_stages,
                         fmt::format("the fetcher rotates UB tiles of {} bytes ({} of UB, 8 event ids): stages is",
                                     tile_bytes, lim.ub_bytes));
    }
    check_gemm_tile(c, lim, [&](double bm, double bn) {
        std::vector<BufferNeed> needs = gemm_tile_needs(bm, bn, lim, elem);
        needs.push_back({"UB",
                         fmt::format("{} base-m x {} {} A tiles of the {} (the baseline all-gather holds two)", ubTiles,
                                     fp32 ? "base-n/2" : (int8 ? "2*base-n" : "base-n"), dtype_name(c.dtype),
                                     v == AgmVariant::Staged ? "fetcher's stages" : "all-gather / producer"),
                         ubTiles * bm * (fp32 ? std::floor(bn / 2) : (int8 ? 2 * bn : bn)) * elem, lim.ub_bytes});
        return needs;
    });
    // Each shard is whole K tiles; an int8 K tile (one panel) is 2 base-n deep, so its shards are
    // whole 2 base-n (an fp32 one, base-n/2, divides base-n).
    const std::int64_t shard_step = std::int64_t{c.ranks} * (int8 ? 2 * c.base_n : c.base_n);
    const char* step_expr = int8 ? "n*2*base-n" : "n*base-n";
    check_positive(kParamM, c.m, c.base_m, "base-m");
    check_positive(kParamN, c.n, c.base_n, "base-n");
    check_positive(kParamK, c.k, shard_step, step_expr);
    check_multiple(kParamK, c.k, shard_step, step_expr,
                   int8 ? "K is the whole product's; each rank's shard K/n is whole int8 K tiles (2*base-n deep), the "
                          "unit A is gathered and multiplied in (M and N may be ragged: they are padded)"
                        : "K is the whole product's; each rank's shard K/n is whole base-n K tiles, the unit A is gathered and "
                          "multiplied in (M and N may be ragged: they are padded)");
    check_out_dtype_fp32_or_input(c);
    if (v == AgmVariant::Staged) {
        check_knob_range(c, "k_per_flag", 1, std::max(1, k_tiles_of(c)),
                         fmt::format("a flag covers 1..K/n/base-n K tiles (each source's shard has {})", k_tiles_of(c)));
    }
}

double workspace_bytes(const OpParams& p) {
    if (p.ranks <= 0 || p.base_m <= 0 || p.base_n <= 0) return 0;
    const double mp = std::ceil(double(p.m) / p.base_m) * p.base_m;
    const double groups = std::ceil(double(k_tiles_of(p)) / std::max(1, k_per_flag_of(p)));
    return double(AgmWindow::kGuardBytes) + mp * p.k * dtype_bytes(p.dtype) + 4.0 * p.ranks * (mp / p.base_m) * groups +
           4.0 * all_gather_cols_arrival_words(baseline_algo(p), p.ranks);
}

namespace {

class AllGatherMatmulRun final : public OpInstance {
public:
    explicit AllGatherMatmulRun(const OpParams& p)
        : params_(p), variant_(variant_of(p)), shape_(shape_of(p)), window_(shape_) {
        windows_.resize(static_cast<std::size_t>(p.ranks));
        window_bases_.resize(static_cast<std::size_t>(p.ranks));
        args_.resize(static_cast<std::size_t>(p.ranks));
    }

    std::vector<std::string> streams() const override { return {"comm", "compute"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        windows_[static_cast<std::size_t>(rank)] = &gm.allocate("agm_window", window_.total_bytes, /*shared=*/true);
        window_bases_[static_cast<std::size_t>(rank)] = windows_[static_cast<std::size_t>(rank)]->base;
    }

    void bind(int rank, const RankTensors& t) override {
        AgmArgs& a = args_[static_cast<std::size_t>(rank)];
        a.shape = shape_;
        a.my_rank = rank;
        a.windows = windows_;
        a.a_shard = t.a;
        a.b = t.b;
        a.c = t.out;
        a.bias = t.bias;
        a.bias_kind = params_.bias;
        a.fault = fault_of(params_.fault);
        a.stages = stages_of(params_);
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const AgmArgs& a = args_[static_cast<std::size_t>(rank)];
        ViewPlan plan;
        switch (kind) {
            case ViewKind::ComputeOnly:
                if (variant_ == AgmVariant::Pull) {
                    plan.phases = {ViewPhase{PhaseRole::Compute, {},
                                             {{kComputeStream, gemm(a, AgmASource::Local, AgmWait::None)}}}};
                } else {
                    plan.reset = [this, rank](HostContext& host) { write_flags(host, rank, 1); };
                    plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kComputeStream, consumer(a)}}}};
                }
                break;
            case ViewKind::Sequential:
                plan.reset = [this, rank](HostContext& host) {
                    place_own_shard(host, rank);
                    host.write_signals(window_.arrivals(rank, window_base(rank)).address, shape_.arrival_words, 0);
                };
                plan.phases = {ViewPhase{PhaseRole::Comm, {}, {{kCommStream, all_gather(rank)}}},
                               ViewPhase{PhaseRole::Compute, {},
                                         {{kComputeStream, gemm(a, AgmASource::Local, AgmWait::None)}}}};
                break;
            case ViewKind::Pipelined: pipelined(plan, a, rank); break;
        }
        return plan;
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        return window_.name_of(address - window_bases_.at(static_cast<std::size_t>(rank)));
    }

private:
    std::int64_t window_base(int rank) const { return window_bases_[static_cast<std::size_t>(rank)]; }

    KernelLaunch gemm(const AgmArgs& a, AgmASource source, AgmWait wait) const {
        return make_agm_gemm_kernel(a, source, wait, params_.compute_blocks);
    }
    KernelLaunch consumer(const AgmArgs& a) const {
        return gemm(a, AgmASource::Local, variant_ == AgmVariant::Push ? AgmWait::All : AgmWait::Peers);
    }

    KernelLaunch all_gather(int rank) const {
        AllGatherColsArgs g;
        g.my_rank = rank;
        for (int r = 0; r < params_.ranks; ++r) {
            g.gathered.push_back(args_[static_cast<std::size_t>(r)].gathered(r));
            g.arrivals.push_back(window_.arrivals(r, window_base(r)));
        }
        g.shard_cols = shape_.k_shard();
        g.tile_rows = shape_.base_m;
        g.tile_cols = shape_.k_tile();
        g.algo = baseline_algo(params_);
        return make_all_gather_cols_kernel(g, params_.comm_blocks);
    }

    void pipelined(ViewPlan& plan, const AgmArgs& a, int rank) const {
        switch (variant_) {
            case AgmVariant::Pull:
                // A_r on the symmetric heap, where the peers load it from.
                plan.reset = [this, rank](HostContext& host) { place_own_shard(host, rank); };
                plan.phases = {ViewPhase{PhaseRole::Both, {},
                                         {{kComputeStream, gemm(a, AgmASource::Remote, AgmWait::None)}}}};
                break;
            case AgmVariant::Push:
            case AgmVariant::Staged: {
                // Inbox / staging cleared (a missing store shows); staged's peers fetch A_r from
                // the window. Iris resets the flags on every call, then a barrier: timed.
                plan.reset = [this, rank](HostContext& host) {
                    host.zero_device(args_[static_cast<std::size_t>(rank)].gathered(rank));
                    if (variant_ == AgmVariant::Staged) place_own_shard(host, rank);
                };
                HostAction timed_reset = [this, rank](HostContext& host) {
                    write_flags(host, rank, 0);
                    host.barrier();
                };
                const KernelLaunch comm = variant_ == AgmVariant::Push ? make_agm_push_kernel(a, params_.comm_blocks)
                                                                       : make_agm_fetch_kernel(a, params_.comm_blocks);
                plan.phases = {ViewPhase{PhaseRole::Both, timed_reset, {{kCommStream, comm}, {kComputeStream, consumer(a)}}}};
                break;
            }
        }
    }

    void write_flags(HostContext& host, int rank, std::int32_t value) const {
        host.write_signals(window_base(rank) + window_.flags_offset, static_cast<int>(window_.flag_count()), value);
    }

    void place_own_shard(HostContext& host, int rank) const {
        const AgmArgs& a = args_[static_cast<std::size_t>(rank)];
        host.copy_device(a.gathered(rank).sub(0, rank * shape_.k_shard(), shape_.m_padded(), shape_.k_shard()), a.a_shard);
    }

    OpParams params_;
    AgmVariant variant_;
    AgmShape shape_;
    AgmWindow window_;
    std::vector<const GmAllocation*> windows_;
    std::vector<std::int64_t> window_bases_;  // for signal_name, which runs after the cluster is gone
    std::vector<AgmArgs> args_;
};

}  // namespace

std::unique_ptr<OpInstance> make_run(const OpParams& p) { return std::make_unique<AllGatherMatmulRun>(p); }

}  // namespace tandem::kernels::agm
