// moe_ffn described for the shared host (README.md in this folder; docs/ops/moe_ffn.md).
// Every rank holds its M tokens x [M, K] (bf16), their routes (topK global experts each, with
// gate weights) and E local experts (int8 W1 [K, N], W2 [N/2, K], fp32 fixpipe scales). Output
// per rank [M, K] fp16: out[t] = sum_k prob[t,k] * FFN_{expert[t,k]}(x[t]), FFN = int8 GMM1 ->
// SwiGLU with dynamic per-row int8 quant -> int8 GMM2 (README.md "Math").
#include "kernels/moe_ffn/op.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/device_barrier.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "kernels/moe_ffn/baseline.hpp"
#include "kernels/moe_ffn/expert_major.hpp"
#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_kernels.hpp"
#include "kernels/moe_ffn/moe_slots.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "kernels/param_error.hpp"
#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

using namespace moe;

constexpr int kFront = 0, kGmm1 = 1, kSwiglu = 2, kGmm2 = 3, kCombine = 4, kMegaMoe = 5;

// The schedules (README.md "Variants").
enum class Plan { Bulk, PerExpert, ExpertMajor, Baseline };

std::int64_t align64(std::int64_t v) { return round_up(v, std::int64_t{64}); }

// Offsets of the window (same on every rank) and of the local buffers.
struct Layout {
    explicit Layout(const RouteTables& t) : slots(t.shape.ranks, t.shape.experts) {
        const MoeShape& s = t.shape;
        const std::int64_t R = s.routes(), K = s.k, N = s.n, H = s.half_n(), E = s.experts, P = s.packed_row_bytes();
        const std::int64_t rows = std::max(1, t.max_recv);
        global_experts = s.global_experts();
        packed = 0;
        combined = align64(packed + R * P);
        count_rows = align64(combined + R * K * 2);
        counters = align64(count_rows + std::int64_t{s.ranks} * 256 * 4);
        barrier1 = DeviceBarrierLayout(s.ranks, align64(counters + 4LL * slots.table.words()));
        barrier2 = DeviceBarrierLayout(s.ranks, align64(barrier1.region_offset + barrier1.bytes()));
        window = align64(barrier2.region_offset + barrier2.bytes());
        keys = 0;  // x is the caller's A (RankTensors::a)
        probs = align64(keys + R * 4);
        sorted = align64(probs + R * 4);
        row_of_route = align64(sorted + 2 * R * 4);
        token_counts = align64(row_of_route + R * 4);
        w1 = align64(token_counts + token_count_cols() * 4);
        w2 = align64(w1 + E * K * N);
        scale1 = align64(w2 + E * H * K);
        scale2 = align64(scale1 + E * N * 4);
        recv = align64(scale2 + E * K * 4);
        gmm1_out = align64(recv + rows * P);
        swiglu_q = align64(gmm1_out + rows * N * 2);
        swiglu_s = align64(swiglu_q + rows * H);
        gmm2_out = align64(swiglu_s + rows * 32);
        local = align64(gmm2_out + rows * K * 2);
    }
    MoeSlots slots;
    std::int64_t packed, combined, count_rows, counters, window;
    DeviceBarrierLayout barrier1, barrier2;
    std::int64_t keys, probs, sorted, row_of_route, token_counts, w1, w2, scale1, scale2, recv, gmm1_out, swiglu_q, swiglu_s,
        gmm2_out, local;
    int global_experts = 0;
    int token_count_cols() const { return std::max(256, global_experts); }
};

// The knobs, as given or defaulted (the published cases' topK 8, 16 experts per rank).
std::map<std::string, int> moe_knobs(const OpParams& p) {
    const MoeShape s = moe_shape_of(p);
    return {{"topk", s.topk},
            {"experts_per_rank", s.experts},
            {"routing", static_cast<int>(s.routing)},
            {"zipf_s_pct", s.zipf_s_pct},
            {"route_seed", s.seed},
            {"max_output_size", s.max_output_size}};
}

// --routing's words: round_robin (0), uniform (1), zipf (2), zipf:S (2, and zipf_s_pct = 100 S).
std::optional<std::map<std::string, int>> routing_words(const std::string& text) {
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == "round_robin" || t == "round-robin") return std::map<std::string, int>{{"routing", 0}};
    if (t == "uniform") return std::map<std::string, int>{{"routing", 1}};
    if (t == "zipf") return std::map<std::string, int>{{"routing", 2}};
    if (t.rfind("zipf:", 0) != 0) return std::nullopt;
    const std::string s = t.substr(5);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    // S in 0.01 steps, as zipf_s_pct holds it (its range is checked with the knob's).
    if (s.empty() || end != s.c_str() + s.size() || !(v > 0) || v > 1e6) return std::nullopt;
    return std::map<std::string, int>{{"routing", 2}, {"zipf_s_pct", static_cast<int>(std::lround(v * 100))}};
}

void validate(const OpParams& p, const BufferLimits& lim) {
    const MoeShape s = moe_shape_of(p);
    check_positive(kParamM, p.m, 1, "1");
    check_positive(kParamK, p.k, kTileN, "256");
    check_positive(kParamN, p.n, kTileN, "256");
    check_multiple(kParamK, p.k, kTileN, "256", "GMM2's output tiles are 256 columns of K");
    check_multiple(kParamN, p.n, kTileN, "256", "GMM1's output tiles are 256 columns of N, and N/2 is GMM2's K in 128 steps");
    check_knob_range(p, "experts_per_rank", 1, 256, "local experts per rank (a count row holds 256)");
    check_knob_range(p, "topk", 1, std::min(256, s.global_experts()), "routes per token, at most the global experts");
    check_knob_range(p, "routing", 0, 2, "the router, 0 round_robin (published), 1 uniform or 2 zipf:");
    check_knob_range(p, "zipf_s_pct", 1, 1000, "the Zipf exponent S x 100");
    check_knob_range(p, "max_output_size", 1, std::numeric_limits<int>::max(), "rows a rank's receive buffers hold:");
    {
        // The receive buffers hold max_output_size rows: a rank routed more has no room (the
        // published kernel would overrun them), so the run is refused naming the rank.
        const RouteTables t = make_route_tables(s);
        for (int r = 0; r < s.ranks; ++r) {
            const int rows = t.recv_total[static_cast<std::size_t>(r)];
            if (rows > s.max_output_size) {
                throw ParamError({ParamValue::knob("max_output_size", s.max_output_size)},
                                 fmt::format("rank {} receives {} routed rows, more than its receive buffers hold (the "
                                             "rows its local experts get from every rank's routes)",
                                             r, rows),
                                 {ParamValue::knob("max_output_size", t.max_recv)});
            }
        }
    }
    // UB: the stages whose buffers grow with K. FrontReorder holds a token's bf16, fp32 and |x|
    // rows, the packed row and two sort chunks; the combine block holds two rows in and out, an
    // fp32 row and Unpermute's chunks. The nearest valid K is the largest multiple of 256 below
    // that fits both.
    const auto front_ub = [&](const MoeShape& x) {
        return std::int64_t{x.k} * (2 + 4 + 4 + 1) + 32 + 2LL * 4 * std::min(x.routes(), kSortChunk) + 1024 + 64;
    };
    const auto combine_ub = [&](const MoeShape& x) { return combine_ub_bytes(x) + unpermute_ub_bytes(x); };
    if (front_ub(s) > lim.ub_bytes || combine_ub(s) > lim.ub_bytes) {
        MoeShape fits = s;
        while (fits.k > kTileN && (front_ub(fits) > lim.ub_bytes || combine_ub(fits) > lim.ub_bytes)) fits.k -= kTileN;
        const bool front = front_ub(s) > lim.ub_bytes;
        throw ParamError({{kParamK, p.k}},
                         fmt::format("{} in UB: {} bytes, above the {} bytes of {}",
                                     front ? "FrontReorder holds a token's rows and two sort chunks"
                                           : "Combine holds two rows in and out, an fp32 row and Unpermute's chunks",
                                     front ? front_ub(s) : combine_ub(s), lim.ub_bytes, lim.profile_name),
                         {{kParamK, fits.k}});
    }
    if (p.comm_blocks < 3 || p.comm_blocks > lim.aiv_cores) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}},
                         fmt::format("the stages' all-rank barriers need every block resident, and per_expert splits the AIVs "
                                     "in three groups: 3 to the {} AIV cores of {}",
                                     lim.aiv_cores, lim.profile_name),
                         {{kParamCommBlocks, std::clamp(p.comm_blocks, 3, std::max(3, lim.aiv_cores))}});
    }
    if (p.compute_blocks < 2 || p.compute_blocks > lim.aic_cores) {
        throw ParamError({{kParamComputeBlocks, p.compute_blocks}},
                         fmt::format("per_expert splits the AICs into GMM1 and GMM2 groups: 2 to the {} AIC cores of {}",
                                     lim.aic_cores, lim.profile_name),
                         {{kParamComputeBlocks, std::clamp(p.compute_blocks, 2, std::max(2, lim.aic_cores))}});
    }
}

// The published replicas: one MIX launch's clusters, each an AIC and two AIVs (expert_major's
// split 2/3 : 1/3 into the GMM1 and GMM2 groups).
void validate_published(const OpParams& p, const BufferLimits& lim) {
    validate(p, lim);
    if (p.compute_blocks < 3) {
        throw ParamError({{kParamComputeBlocks, p.compute_blocks}},
                         "the published kernel's clusters (expert_major splits them 2/3 : 1/3 into GMM1 and GMM2 "
                         "groups): at least 3",
                         {{kParamComputeBlocks, lim.aic_cores}});
    }
    if (p.comm_blocks != 2 * p.compute_blocks) {
        throw ParamError({{kParamCommBlocks, p.comm_blocks}, {kParamComputeBlocks, p.compute_blocks}},
                         fmt::format("the published kernel is one MIX launch: every cluster is an AIC and two AIVs, so the AIV "
                                     "blocks must be twice the AIC blocks ({})",
                                     2 * p.compute_blocks),
                         {{kParamCommBlocks, 2 * p.compute_blocks}});
    }
}

class MoeFfnRun final : public OpInstance {
public:
    MoeFfnRun(const OpParams& p, Plan plan)
        : p_(p), plan_(plan), overlapped_(plan != Plan::Bulk),
          tables_(std::make_shared<RouteTables>(make_route_tables(moe_shape_of(p)))), lay_(*tables_),
          slots_(std::make_shared<MoeSlots>(lay_.slots)), schedule_(expert_major_schedule(tables_->shape, p.compute_blocks)),
          window_(static_cast<std::size_t>(p.ranks), nullptr), local_(static_cast<std::size_t>(p.ranks), nullptr),
          window_bases_(static_cast<std::size_t>(p.ranks), -1), ranks_(static_cast<std::size_t>(p.ranks)) {
        const std::string& f = p.fault;
        fault_ = f == "skip_last_route"    ? Fault::SkipLastRoute
                 : f == "drop_scale1"      ? Fault::DropScale1
                 : f == "flag_before_rows" ? Fault::FlagBeforeRows
                 : f == "stale_epoch"      ? Fault::StaleEpoch
                                           : Fault::None;
        const int aiv = p.comm_blocks, aic = p.compute_blocks;
        // The reference views (compute-only, sequential) run each stage on all the cores.
        all_blocks_ = StageBlocks{aiv, aiv, aic, aiv, aic, aiv, aiv};
        if (!overlapped_) {
            blocks_ = all_blocks_;
        } else {
            const int third = aiv / 3;
            const int g1 = std::max(1, aic * 2 / 3);
            blocks_ = StageBlocks{third, third, g1, third, aic - g1, aiv - 2 * third, aiv - 2 * third};
        }
    }

    std::vector<std::string> streams() const override {
        // The sequential view's stage streams, then the published kernel's one MIX launch.
        if (plan_ == Plan::ExpertMajor) return {"front", "gmm1", "swiglu", "gmm2", "combine", "megamoe_v1"};
        if (plan_ == Plan::Baseline) return {"front", "gmm1", "swiglu", "gmm2", "combine", "megamoe_baseline"};
        return {"front", "gmm1", "swiglu", "gmm2", "combine"};
    }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        const GmAllocation& w = gm.allocate("moe_window", lay_.window, /*shared=*/true);
        const GmAllocation& l = gm.allocate("moe_local", lay_.local);
        window_[static_cast<std::size_t>(rank)] = &w;
        local_[static_cast<std::size_t>(rank)] = &l;
        window_bases_[static_cast<std::size_t>(rank)] = w.base;
        if (gm.functional()) fill_inputs(rank, l);
    }

    void bind(int rank, const RankTensors& t) override {
        const MoeShape& s = tables_->shape;
        auto a = std::make_shared<MoeRank>();
        a->rank = rank;
        a->tables = tables_;
        a->slots = slots_;
        a->fault = fault_;
        const GmAllocation& l = *local_[static_cast<std::size_t>(rank)];
        const int K = s.k, N = s.n, H = s.half_n(), E = s.experts, P = s.packed_row_bytes(), R = s.routes();
        const int rows = std::max(1, tables_->max_recv);
        if (t.a.rows() != s.m || t.a.cols() != K || t.a.dtype() != s.x_dtype)
            throw std::invalid_argument(fmt::format("moe_ffn rank {}: x (A) is {} x {} {}, the op needs {} x {} {}", rank,
                                                    t.a.rows(), t.a.cols(), dtype_name(t.a.dtype()), s.m, K,
                                                    dtype_name(s.x_dtype)));
        a->x = t.a;  // the caller's tokens, M x K in s.x_dtype (the sharding's A)
        a->keys = GmTensor(l, lay_.keys, 1, R, R, DType::F32);
        a->probs = GmTensor(l, lay_.probs, s.m, s.topk, s.topk, DType::F32);
        a->sorted = GmTensor(l, lay_.sorted, 2, R, R, DType::F32);
        a->row_of_route = GmTensor(l, lay_.row_of_route, 1, R, R, DType::I32);
        a->token_counts = GmTensor(l, lay_.token_counts, 1, lay_.token_count_cols(), lay_.token_count_cols(), DType::F32);
        for (int e = 0; e < E; ++e) {
            a->w1.emplace_back(l, lay_.w1 + std::int64_t{e} * K * N, K, N, N, DType::I8);
            a->w2.emplace_back(l, lay_.w2 + std::int64_t{e} * H * K, H, K, K, DType::I8);
        }
        a->scale1 = GmTensor(l, lay_.scale1, E, N, N, DType::F32);
        a->scale2 = GmTensor(l, lay_.scale2, E, K, K, DType::F32);
        a->recv = GmTensor(l, lay_.recv, rows, P, P, DType::I8);
        a->recv_scale = GmTensor(l, lay_.recv, rows, P / 4, P / 4, DType::F32);
        a->gmm1_out = GmTensor(l, lay_.gmm1_out, rows, N, N, DType::F16);
        a->swiglu_q = GmTensor(l, lay_.swiglu_q, rows, H, H, DType::I8);
        a->swiglu_s = GmTensor(l, lay_.swiglu_s, rows, 8, 8, DType::F32);
        a->gmm2_out = GmTensor(l, lay_.gmm2_out, rows, K, K, DType::F16);
        a->out = t.out;
        for (int r = 0; r < p_.ranks; ++r) {
            const GmAllocation& w = *window_[static_cast<std::size_t>(r)];
            a->packed.emplace_back(w, lay_.packed, R, P, P, DType::I8);
            a->combined.emplace_back(w, lay_.combined, R, K, K, DType::F16);
            a->count_rows.emplace_back(w, lay_.count_rows, p_.ranks, 256, 256, DType::I32);
        }
        a->window_bases = window_bases_;
        a->slots_offset = lay_.counters;
        a->after_reorder = DeviceBarrier{lay_.barrier1, rank, window_bases_};
        a->after_combine = DeviceBarrier{lay_.barrier2, rank, window_bases_};
        ranks_[static_cast<std::size_t>(rank)] = std::move(a);
    }

    ViewPlan view(ViewKind kind, int rank) const override {
        const std::shared_ptr<const MoeRank> a = ranks_[static_cast<std::size_t>(rank)];
        const bool fused = kind != ViewKind::Sequential && overlapped_;
        const StageBlocks& b = fused ? blocks_ : all_blocks_;
        ViewPlan plan;
        const std::int64_t base = window_bases_[static_cast<std::size_t>(rank)];
        const int E = tables_->shape.experts;
        const bool compute_only = kind == ViewKind::ComputeOnly;
        const bool v1 = plan_ == Plan::ExpertMajor && kind != ViewKind::Sequential;
        const bool published = (plan_ == Plan::ExpertMajor || plan_ == Plan::Baseline) && kind != ViewKind::Sequential;
        const bool stale = fault_ == Fault::StaleEpoch;
        plan.reset = [this, base, E, compute_only, b, v1, stale](HostContext& host) {
            if (!stale) host.write_signals(base + lay_.counters, lay_.slots.table.words(), 0);
            // Compute-only: the tokens are already in place (every expert dispatched).
            if (compute_only && v1) host.write_signals(base + lay_.counters + 4LL * lay_.slots.gmm1_ready, E, 1);
            else if (compute_only) host.write_signals(base + lay_.counters + 4LL * lay_.slots.dispatched, E, b.dispatch);
            lay_.barrier1.host_reset(host, base);
            lay_.barrier2.host_reset(host, base);
        };
        auto phase = [](PhaseRole role, int stream, KernelLaunch k) {
            ViewPhase ph;
            ph.role = role;
            ph.launches.push_back(StreamLaunch{stream, std::move(k)});
            return ph;
        };
        if (published) {
            // The published kernel: one MIX launch (its FFN parts alone for compute-only).
            plan.phases.push_back(phase(compute_only ? PhaseRole::Compute : PhaseRole::Both, kMegaMoe,
                                        v1 ? expert_major_kernel(a, schedule_, compute_only)
                                           : baseline_kernel(a, baseline_schedule(tables_->shape, p_.compute_blocks), compute_only)));
            return plan;
        }
        if (compute_only && overlapped_) {
            // The variant's FFN stages at once on their core groups, the tokens already in place.
            ViewPhase ph;
            ph.role = PhaseRole::Compute;
            ph.launches = {StreamLaunch{kGmm2, gmm2_kernel(a, blocks_)}, StreamLaunch{kSwiglu, swiglu_kernel(a, blocks_)},
                           StreamLaunch{kGmm1, gmm1_kernel(a, blocks_)}};
            plan.phases.push_back(std::move(ph));
            return plan;
        }
        if (compute_only) {
            plan.phases.push_back(phase(PhaseRole::Compute, kGmm1, gmm1_kernel(a, b)));
            plan.phases.push_back(phase(PhaseRole::Compute, kSwiglu, swiglu_kernel(a, b)));
            plan.phases.push_back(phase(PhaseRole::Compute, kGmm2, gmm2_kernel(a, b)));
            return plan;
        }
        if (fused) {
            ViewPhase ph;
            ph.role = PhaseRole::Both;
            ph.launches = {StreamLaunch{kCombine, combine_kernel(a, b, true)},
                           StreamLaunch{kGmm2, gmm2_kernel(a, b)},
                           StreamLaunch{kSwiglu, swiglu_kernel(a, b)},
                           StreamLaunch{kGmm1, gmm1_kernel(a, b)},
                           StreamLaunch{kFront, front_reorder_kernel(a, b, true)}};
            plan.phases.push_back(std::move(ph));
            return plan;
        }
        // Sequential (and bulk's pipelined view): each stage to completion.
        plan.phases.push_back(phase(PhaseRole::Comm, kFront, front_reorder_kernel(a, b, false)));
        plan.phases.push_back(phase(PhaseRole::Comm, kFront, dispatch_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kGmm1, gmm1_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kSwiglu, swiglu_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Compute, kGmm2, gmm2_kernel(a, b)));
        plan.phases.push_back(phase(PhaseRole::Comm, kCombine, combine_kernel(a, b, false)));
        plan.phases.push_back(phase(PhaseRole::Comm, kCombine, unpermute_kernel(a, b)));
        return plan;
    }

    std::vector<std::string> stage_names() const override { return moe_stage_names(); }

    std::string signal_name(int rank, std::int64_t address) const override {
        const std::int64_t base = window_bases_.at(static_cast<std::size_t>(rank));
        if (base < 0 || address < base || address >= base + lay_.window) return {};
        const std::int64_t off = address - base;
        if (off >= lay_.barrier2.region_offset) return "combine_" + lay_.barrier2.name_of(rank, off);
        if (off >= lay_.barrier1.region_offset) return "reorder_" + lay_.barrier1.name_of(rank, off);
        if (off >= lay_.counters) return lay_.slots.table.name_of(static_cast<int>((off - lay_.counters) / 4));
        return {};
    }

private:
    // The op's inputs besides x (the caller's A), written where the kernels read them (functional
    // runs only).
    void fill_inputs(int rank, const GmAllocation& l) const {
        const MoeShape& s = tables_->shape;
        std::byte* d = const_cast<std::byte*>(l.data.data());  // the host places the inputs before any kernel runs
        const int K = s.k, N = s.n, H = s.half_n(), E = s.experts;
        auto* keys = reinterpret_cast<float*>(d + lay_.keys);
        auto* probs = reinterpret_cast<float*>(d + lay_.probs);
        const std::vector<std::int32_t>& ex = tables_->expert[static_cast<std::size_t>(rank)];
        for (int i = 0; i < s.routes(); ++i) {
            keys[i] = -static_cast<float>(ex[static_cast<std::size_t>(i)]);
            probs[i] = prob_value(s, rank, i / s.topk, i % s.topk);
        }
        auto* w1 = reinterpret_cast<std::int8_t*>(d + lay_.w1);
        auto* w2 = reinterpret_cast<std::int8_t*>(d + lay_.w2);
        auto* s1 = reinterpret_cast<float*>(d + lay_.scale1);
        auto* s2 = reinterpret_cast<float*>(d + lay_.scale2);
        for (int e = 0; e < E; ++e) {
            const int g = rank * E + e;
            for (int kk = 0; kk < K; ++kk) w1_row(s, g, kk, w1 + (std::int64_t{e} * K + kk) * N);
            for (int j = 0; j < H; ++j) w2_row(s, g, j, w2 + (std::int64_t{e} * H + j) * K);
            for (int nn = 0; nn < N; ++nn) s1[std::int64_t{e} * N + nn] = scale1_value(s, g, nn);
            for (int c = 0; c < K; ++c) s2[std::int64_t{e} * K + c] = scale2_value(s, g, c);
        }
    }

    OpParams p_;
    Plan plan_;
    bool overlapped_;
    Fault fault_ = Fault::None;
    std::shared_ptr<RouteTables> tables_;
    Layout lay_;
    std::shared_ptr<const MoeSlots> slots_;
    ExpertMajorSchedule schedule_;
    StageBlocks blocks_;
    StageBlocks all_blocks_;
    std::vector<const GmAllocation*> window_;
    std::vector<const GmAllocation*> local_;
    std::vector<std::int64_t> window_bases_;
    std::vector<std::shared_ptr<const MoeRank>> ranks_;
};

// The results' extras: rows per local expert (rank-major) and per rank, and the bytes each rank
// receives from its peers in the dispatch (packed rows) and in the combine (fp16 rows).
std::map<std::string, std::vector<double>> moe_extras(const OpParams& p) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    const MoeShape& s = t.shape;
    std::map<std::string, std::vector<double>> x;
    auto& per_expert = x["moe_rows_per_expert"];
    auto& per_rank = x["moe_rows_per_rank"];
    auto& dispatched = x["moe_dispatch_bytes_in_per_rank"];
    auto& combined = x["moe_combine_bytes_in_per_rank"];
    for (int r = 0; r < s.ranks; ++r) {
        double in = 0, back = 0;
        for (int e = 0; e < s.experts; ++e) {
            per_expert.push_back(t.recv_rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(e)]);
            for (int src = 0; src < s.ranks; ++src)
                if (src != r) in += t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(r * s.experts + e)];
        }
        for (int g = 0; g < s.global_experts(); ++g)
            if (g / s.experts != r) back += t.count[static_cast<std::size_t>(r)][static_cast<std::size_t>(g)];
        per_rank.push_back(t.recv_total[static_cast<std::size_t>(r)]);
        dispatched.push_back(in * s.packed_row_bytes());
        combined.push_back(back * 2.0 * s.k);
    }
    return x;
}

VariantDesc moe_defaults() {
    VariantDesc v;
    v.dtypes = {DType::BF16, DType::F16};  // x: bf16 as the published build, or fp16 (its README: half/bf16)
    v.out_dtypes = {DType::F16};
    v.default_shape = std::array<int, 3>{2048, 7168, 4096};
    v.knobs = {KnobDesc{"topk", {}, "routes per token (default 8, the published cases')", {}},
               KnobDesc{"experts_per_rank", {}, "local experts per rank E (default 16)", {}},
               KnobDesc{"routing", {},
                        "router: round_robin (0, the published one, default), uniform (1, seeded), zipf (2) or zipf:S "
                        "(2 with the exponent S: --zipf-s-pct 100 S)",
                        {}, routing_words, "round_robin, uniform, zipf or zipf:S (S > 0, like zipf:1.2)"},
               KnobDesc{"zipf_s_pct", {}, "routing 2: the Zipf exponent S x 100 (default 120)", {}},
               KnobDesc{"route_seed", {}, "routing 1 and 2: the seed (default 0)", {}},
               KnobDesc{"max_output_size", {}, "rows a rank's receive buffers hold; more routed to a rank is refused "
                                               "(default 81940, the published cases')", {}}};
    v.faults = {"skip_last_route", "drop_scale1"};
    v.validate = validate;
    v.workspace_bytes = [](const OpParams& p) {
        const Layout l(make_route_tables(moe_shape_of(p)));
        return static_cast<double>(l.window + l.local);
    };
    v.effective_knobs = moe_knobs;
    v.constraints = "K and N multiples of 256; K <= about 8K (UB); 3 <= comm blocks <= AIV cores; 2 <= compute blocks; "
                    "bf16 (or fp16) x, fp16 out; no bias";
    return v;
}

}  // namespace

const OpDesc& moe_ffn_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "moe_ffn";
        d.title = "MoE FFN (EP dispatch + int8 GMM + combine)";
        d.doc = "expert-parallel MoE layer: route sort, dispatch all-to-all-v, int8 GMM1 -> SwiGLU + int8 quant -> int8 "
                "GMM2 per expert, combine and top-K weighted unpermute (the published MegaMoE kernel's math)";
        // x is the rank's own [M, K]: A, replicated in shape, its values the caller's (B is unused:
        // the experts' weights are the op's); the output has x's shape.
        d.sharding = Sharding{Split::Replicated, Split::Replicated, false, Split::Replicated, /*out_like_a=*/true};
        d.comm_kind = "alltoallv";
        d.comm_payload_bytes = [](const OpParams& p) {
            // Rows this rank receives from peers: dispatch (K + 32 B each) and combine (2K B each).
            const RouteTables t = make_route_tables(moe_shape_of(p));
            double rows_in = 0, rows_back = 0;
            for (int src = 0; src < p.ranks; ++src)
                for (int e = 0; e < t.shape.experts; ++e)
                    if (src != 0) rows_in += t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(e)];
            for (int g = t.shape.experts; g < t.shape.global_experts(); ++g) rows_back += t.count[0][static_cast<std::size_t>(g)];
            return rows_in * t.shape.packed_row_bytes() + rows_back * 2.0 * t.shape.k;
        };
        d.test_shape = [](int ranks) { return RunShape{ranks, 16, 256, 512, 128, 256, std::nullopt, std::nullopt}; };
        d.bench_shape = RunShape{8, 128, 1024, 1024};
        d.scale_shape = RunShape{64, 128, 7168, 4096};
        VariantDesc bulk = derive_variant(moe_defaults(), "bulk",
                                          "each stage to completion: reorder + quant, dispatch all-to-all-v, GMM1, SwiGLU, "
                                          "GMM2, combine all-to-all, unpermute (the sequential reference)");
        bulk.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::Bulk); };
        VariantDesc per_expert = derive_variant(moe_defaults(), "per_expert",
                                                "the stages on their own core groups at once, handing over expert by expert "
                                                "through GM counters (the published kernel's structure, simplified)");
        per_expert.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::PerExpert); };
        VariantDesc expert_major =
            derive_variant(moe_defaults(), "expert_major",
                           "replica of the published MegaMoE V1 (expert-major): fixed AIC/AIV groups (GMM1 on 24 then 16 "
                           "AICs, GMM2 on 8 joined by 16), per-expert arrival/ready signals with coordinators, the per-M "
                           "knob table, the three sort paths, count-as-flag, two Unpermute phases");
        expert_major.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::ExpertMajor); };
        expert_major.validate = validate_published;
        // The replicas' FrontReorder takes the published sort path by M x topK: on 4 ranks enough
        // routes (6400 > 6144) for the MultiCore path and its post-sort steps, whose inverse step
        // stores 4-byte words of one 32-byte block from many AIVs at once (docs/ops/moe_ffn.md);
        // on 2 and 8 the FullLoad path.
        expert_major.test_shape = [](int ranks) { return RunShape{ranks, ranks == 4 ? 800 : 16, 256, 512, 128, 256, std::nullopt, std::nullopt}; };
        expert_major.faults = {"skip_last_route", "drop_scale1", "flag_before_rows", "stale_epoch"};
        VariantDesc baseline =
            derive_variant(moe_defaults(), "baseline",
                           "replica of the published MegaMoE baseline (the overview's version): AIVs stage by stage "
                           "(dispatch with a SYNCALL per expert, SwiGLU per segment, combine, CrossRankSync, unpermute), "
                           "GMM1 then GMM2 on all AICs, FFTS hard flags per expert and per segment");
        baseline.make = [](const OpParams& p) { return std::make_unique<MoeFfnRun>(p, Plan::Baseline); };
        baseline.validate = validate_published;
        baseline.test_shape = expert_major.test_shape;
        baseline.faults = {"skip_last_route", "drop_scale1"};
        d.variants = {per_expert, bulk, expert_major, baseline};
        d.own_math = OwnMath{[](const OpParams& p, int rank, const OwnMathInput& x) { return golden_rank(moe_shape_of(p), rank, x); }, 1e-4, 1e-3, 1e-3,
                             "the published host's check: |a - e| > atol + rtol |e| with atol 1e-4, rtol 1e-3, at most "
                             "floor(rtol x numel) elements may err",
                             moe_extras};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
