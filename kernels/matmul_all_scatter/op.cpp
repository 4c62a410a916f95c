// matmul_all_scatter described for the shared host (docs/ops/matmul_all_scatter.md; Iris's
// "GEMM + All scatter"):
// A replicated, B split by columns, every rank gets all of C. Rank r computes its column block
// C[:, r*N/W ..) and sends it to every rank. Variants, as Iris names them:
//   bulk_sync          the GEMM kernel, then (same stream: the kernel boundary is the barrier)
//                      the scatter kernel;
//   fused_sequential   one persistent AIC kernel storing each finished tile into every rank's
//                      output straight from L0C;
//   producer_consumer  GEMM (AIC) and scatter (AIV) kernels on two streams, per-tile flags;
//   specialized        one MIX kernel, its clusters split between GEMM and scatter
//                      (--gemm-blocks of --total-blocks; Iris's --gemm_sms / --total_sms).
// Views: compute-only is the GEMM kernel alone (own output only); sequential is the GEMM kernel,
// then the scatter kernel (an all-gather of C's column blocks), each its own phase.
#include "kernels/matmul_all_scatter/op.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/collectives/comm_grid.hpp"
#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/stream_k_gemm.hpp"
#include "kernels/common/gemm_block_push.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

constexpr int kGemmStream = 0;
constexpr int kCommStream = 1;

int out_bytes(const OpParams& p) { return dtype_bytes(p.out_dtype); }

int comm_tile_n(const OpParams& p) { return p.knob("comm_tile_n").value_or(p.base_n); }
int comm_tile_m(const OpParams& p) {
    return p.knob("comm_tile_m").value_or(collectives::comm_tile_rows(p.base_m, comm_tile_n(p), p.out_dtype));
}

// Clusters a MIX kernel can have on the chip at once.
int clusters_of(const BufferLimits& lim) { return std::min(lim.aic_cores, lim.aiv_cores / 2); }
int total_blocks(const OpParams& p) { return p.knob("total_blocks").value_or(p.compute_blocks); }
// Iris's default split is 256 of 304 CUs for the GEMM (about 5/6): the same share here.
int gemm_blocks(const OpParams& p) {
    const int total = total_blocks(p);
    return p.knob("gemm_blocks").value_or(std::max(1, total - std::max(1, total / 6)));
}

int m_tiles(const OpParams& p) { return (p.m + p.base_m - 1) / p.base_m; }
int block_tiles(const OpParams& p) { return m_tiles(p) * (p.n / p.ranks / p.base_n); }

bool uses_flags(const std::string& variant) { return variant == "producer_consumer" || variant == "specialized"; }

void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double ob = out_bytes(p);
    check_gemm_tile(p, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
    if (p.out_dtype != DType::F32 && p.out_dtype != p.dtype) {
        fail_check(fmt::format("--out-dtype {}: the output is fp32 or the input dtype ({})", dtype_name(p.out_dtype),
                               dtype_name(p.dtype)));
    }
    check_positive("--gm", "M", p.m, p.base_m, "base-m");
    check_positive("--gk", "K", p.k, p.base_n, "base-n");
    const std::int64_t block = std::int64_t{p.ranks} * p.base_n;
    check_positive("--gn", "N", p.n, block, "n*base-n");
    // M and K are padded; N is not: rank r's columns sit at r*N/W in every output, so a block
    // padded to whole tiles would overwrite its neighbour's.
    check_multiple("--gn", "N", p.n, block, "n*base-n",
                   "each rank's column block of C is whole base-n tiles (M and K may be anything)");
    check_knob_range(p, "comm_tile_m", 1, p.base_m, "a comm tile has");
    check_knob_range(p, "comm_tile_n", 1, p.base_n, "a comm tile has");
    const int cm = comm_tile_m(p);
    const int cn = comm_tile_n(p);
    if (p.base_m % cm != 0) {
        fail_check(fmt::format("--comm-tile-m {}: must divide base-m = {} (a GEMM tile is sent in whole comm tiles); "
                               "nearest valid: {}", cm, p.base_m, collectives::comm_tile_rows(p.base_m, cn, p.out_dtype)));
    }
    if (p.base_n % cn != 0) {
        fail_check(fmt::format("--comm-tile-n {}: must divide base-n = {} (a GEMM tile is sent in whole comm tiles); "
                               "nearest valid: {}", cn, p.base_n, p.base_n));
    }
    const double ub = collectives::scatter_ub_bytes(cm, cn, static_cast<int>(ob));
    if (ub > static_cast<double>(lim.ub_bytes)) {
        fail_check(fmt::format("--comm-tile-m {} --comm-tile-n {}: four {}x{} {} comm tiles (two sets of two) take {:.0f} bytes of UB, "
                               "more than the {} bytes of {}; nearest valid: --comm-tile-m {}",
                               cm, cn, cm, cn, dtype_name(p.out_dtype), ub, lim.ub_bytes, lim.profile_name,
                               collectives::comm_tile_rows(p.base_m, cn, p.out_dtype)));
    }
}

void validate_specialized(const OpParams& p, const BufferLimits& lim) {
    validate_common(p, lim);
    const int clusters = clusters_of(lim);
    check_knob_range(p, "total_blocks", 2, clusters,
                     "the MIX kernel's clusters must all be resident (scatter clusters spin on flags) and "
                     "include a GEMM and a scatter cluster:");
    const int total = total_blocks(p);
    if (total < 2 || total > clusters) {
        fail_check(fmt::format("--total-blocks {}: the MIX kernel needs 2..{} clusters on {} (all resident, at "
                               "least one GEMM and one scatter cluster); nearest valid: {}",
                               total, clusters, lim.profile_name, std::clamp(total, 2, clusters)));
    }
    check_knob_range(p, "gemm_blocks", 1, total - 1, "GEMM clusters (the rest scatter) number");
}

bool stream_k(const OpParams& p) { return p.schedule != "data_parallel"; }

// The schedule of a GEMM kernel of `blocks` blocks on this rank's column block.
GemmSchedule schedule_of(const OpParams& p, int blocks) {
    return GemmSchedule(parse_gemm_schedule(p.schedule), block_tiles(p), (p.k + p.base_n - 1) / p.base_n,
                        std::max(1, blocks));
}

// The stream-K region: room for the compute-only/sequential GEMM (compute_blocks blocks) and the
// pipelined one (specialized: gemm_blocks); the views run one after the other.
std::int64_t stream_k_bytes(const OpParams& p) {
    if (!stream_k(p)) return 0;
    std::int64_t bytes = stream_k_layout(schedule_of(p, p.compute_blocks), p.base_m, p.base_n).bytes;
    if (p.variant == "specialized")
        bytes = std::max(bytes, stream_k_layout(schedule_of(p, gemm_blocks(p)), p.base_m, p.base_n).bytes);
    return bytes;
}

double workspace_bytes(const OpParams& p) {
    return (uses_flags(p.variant) ? 4.0 * m_tiles(p) * (static_cast<double>(p.n) / p.ranks / p.base_n) : 0.0) +
           static_cast<double>(stream_k_bytes(p));
}

void validate_fused(const OpParams& p, const BufferLimits& lim) {
    validate_common(p, lim);
    check_stream_k_blocks(p, lim);
}

class MatmulAllScatterRun final : public OpInstance {
public:
    explicit MatmulAllScatterRun(const OpParams& p)
        : p_(p), tensors_(static_cast<std::size_t>(p.ranks)), flags_(static_cast<std::size_t>(p.ranks), -1),
          stream_k_(static_cast<std::size_t>(p.ranks), nullptr), stream_k_base_(static_cast<std::size_t>(p.ranks), -1) {}

    std::vector<std::string> streams() const override { return {"gemm", "comm"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        if (stream_k(p_)) {
            stream_k_[static_cast<std::size_t>(rank)] = &gm.allocate("stream_k_partials", stream_k_bytes(p_));
            stream_k_base_[static_cast<std::size_t>(rank)] = stream_k_[static_cast<std::size_t>(rank)]->base;  // for signal_name
        }
        if (!uses_flags(p_.variant)) return;
        flags_[static_cast<std::size_t>(rank)] =
            gm.allocate("tile_ready_flags", 4 * std::int64_t{block_tiles(p_)}).base;
    }

    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }

    ViewPlan view(ViewKind kind, int rank) const override {
        const GemmBlockArgs local = args(rank, /*flagged=*/false);
        const bool sk = stream_k(p_);
        const StreamKGemm local_sk = sk ? stream_k_gemm(local, rank, p_.compute_blocks) : StreamKGemm{local.grid(), schedule_of(p_, 1)};
        const KernelLaunch gemm = sk ? make_stream_k_gemm_kernel("MatmulScatterGemmStreamKKernel", local_sk, local.to_own_output())
                                     : make_block_gemm_kernel("MatmulScatterGemmKernel", local, p_.compute_blocks);
        const HostAction sk_reset = [sk, local_sk](HostContext& host) {
            if (sk) reset_stream_k_counters(host, local_sk);
        };
        const KernelLaunch scatter = collectives::make_scatter_kernel("AllGatherColumnBlocksKernel", local.scatter(),
                                                                      p_.comm_blocks);
        ViewPlan plan;
        plan.reset = sk_reset;
        if (kind == ViewKind::ComputeOnly) {
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kGemmStream, gemm}}}};
            return plan;
        }
        if (kind == ViewKind::Sequential) {
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kGemmStream, gemm}}},
                           ViewPhase{PhaseRole::Comm, {}, {{kCommStream, scatter}}}};
            return plan;
        }
        const std::string& v = p_.variant;
        if (v == "bulk_sync") {
            plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kGemmStream, gemm}, {kGemmStream, scatter}}}};
        } else if (v == "fused_sequential") {
            const KernelLaunch fused =
                sk ? make_stream_k_gemm_kernel("MatmulScatterFusedSequentialStreamKKernel", local_sk, local.to_every_rank())
                   : make_block_fused_sequential_kernel("MatmulScatterFusedSequentialKernel", local, p_.compute_blocks);
            plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kGemmStream, fused}}}};
        } else {
            const GemmBlockArgs flagged = args(rank, /*flagged=*/true);
            const StreamKGemm gemm_sk = sk ? stream_k_gemm(flagged, rank, gemm_blocks(p_)) : local_sk;
            plan.reset = [this, rank, sk, gemm_sk](HostContext& host) {
                reset_flags(host, rank);
                if (sk) reset_stream_k_counters(host, gemm_sk);
            };
            if (v == "producer_consumer") {
                const KernelLaunch consumer =
                    collectives::make_scatter_kernel("ScatterConsumerKernel", flagged.scatter(), p_.comm_blocks);
                // The consumer first, as the Ascend seed launches its comm kernel before the compute
                // kernel: it is waiting on its first flag when the GEMM starts.
                plan.phases = {ViewPhase{PhaseRole::Both, {},
                                         {{kCommStream, consumer},
                                          {kGemmStream, make_block_gemm_kernel("MatmulScatterGemmKernel", flagged, p_.compute_blocks)}}}};
            } else {
                const KernelLaunch k = sk ? make_block_specialized_stream_k_kernel("MatmulScatterSpecializedStreamKKernel", flagged, gemm_sk, total_blocks(p_))
                                          : make_block_specialized_kernel("MatmulScatterSpecializedKernel", flagged, gemm_blocks(p_), total_blocks(p_));
                plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kGemmStream, k}}}};
            }
        }
        return plan;
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        if (stream_k(p_)) {  // either schedule's counters (compute_blocks or gemm_blocks blocks)
            const std::int64_t sk_base = stream_k_base_.at(static_cast<std::size_t>(rank));
            for (int blocks : {p_.compute_blocks, gemm_blocks(p_)}) {
                const StreamKLayout l = stream_k_layout(schedule_of(p_, blocks), p_.base_m, p_.base_n);
                const std::int64_t first = sk_base + l.counters_offset;
                if (sk_base >= 0 && address >= first && address < first + 4 * std::int64_t{l.slots})
                    return fmt::format("partial_ready[slot={}]", (address - first) / 4);
            }
        }
        const std::int64_t base = flags_.at(static_cast<std::size_t>(rank));
        if (base < 0 || address < base || address >= base + 4 * std::int64_t{block_tiles(p_)}) return {};
        return fmt::format("tile_ready[{}]", (address - base) / 4);
    }

private:
    StreamKGemm stream_k_gemm(const GemmBlockArgs& a, int rank, int blocks) const {
        const GemmSchedule schedule = schedule_of(p_, blocks);
        const StreamKLayout l = stream_k_layout(schedule, p_.base_m, p_.base_n);
        const GmAllocation& ws = *stream_k_[static_cast<std::size_t>(rank)];
        const GmTensor partials = l.slots > 0 ? GmTensor(ws, l.partials_offset, l.slots * p_.base_m, p_.base_n, p_.base_n,
                                                         DType::F32)
                                              : GmTensor{};
        StreamKGemm sk = a.stream_k(schedule.kind(), schedule.blocks(), partials, SignalAddr{rank, ws.base + l.counters_offset});
        sk.skip_partial = p_.fault == "skip_fixup_partial";
        return sk;
    }

    GemmBlockArgs args(int rank, bool flagged) const {
        const RankTensors& t = tensors_[static_cast<std::size_t>(rank)];
        GemmBlockArgs a;
        a.my_rank = rank;
        a.ranks = p_.ranks;
        a.a = t.a;
        a.b = t.b;
        a.bias = t.bias;
        a.bias_kind = p_.bias;
        a.base_m = p_.base_m;
        a.base_n = p_.base_n;
        const int cols = p_.n / p_.ranks;
        a.col0 = rank * cols;
        for (const RankTensors& other : tensors_) a.out_block.push_back(other.out.sub(0, a.col0, other.out.rows(), cols));
        if (flagged) a.ready = SignalAddr{rank, flags_[static_cast<std::size_t>(rank)]};
        a.comm_tile_m = comm_tile_m(p_);
        a.comm_tile_n = comm_tile_n(p_);
        a.skip_last_k_panel = p_.fault == "skip_last_k_panel";
        if (p_.fault == "skip_peer") a.skip_peer = (rank + 1) % p_.ranks;
        return a;
    }

    void reset_flags(HostContext& host, int rank) const {
        host.write_signals(flags_[static_cast<std::size_t>(rank)], block_tiles(p_), 0);
    }

    OpParams p_;
    std::vector<RankTensors> tensors_;
    std::vector<std::int64_t> flags_;  // base address of each rank's flags (-1: none)
    std::vector<const GmAllocation*> stream_k_;  // each rank's stream-K partials and counters
    std::vector<std::int64_t> stream_k_base_;
};

std::vector<KnobDesc> comm_tile_knobs() {
    return {KnobDesc{"comm_tile_m", {"--COMMUNICATION_TILE_M"},
                     "rows of a comm tile, the unit the scatter moves through UB (Iris's COMMUNICATION_TILE_M; "
                     "default: the largest divisor of base-m whose tile is <= 32 KiB)",
                     {}},
            KnobDesc{"comm_tile_n", {"--COMMUNICATION_TILE_N"},
                     "columns of a comm tile (Iris's COMMUNICATION_TILE_N; default: base-n)", {}}};
}

VariantDesc base_variant(const std::string& name, const std::string& doc) {
    VariantDesc v;
    v.name = name;
    v.doc = doc;
    v.constraints = "N % (n*base-n) == 0 (M, K padded); fp16/bf16 in, fp32 or input-dtype out; bias none/m/n";
    v.dtypes = {DType::F16, DType::BF16};
    v.out_dtypes = {DType::F32, DType::F16, DType::BF16};
    v.takes_bias = true;
    v.output_in_window = true;  // peers store their column blocks into it
    v.faults = {"skip_last_k_panel", "skip_peer"};
    v.validate = validate_common;
    v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, p.base_n}; };
    v.workspace_bytes = workspace_bytes;
    v.knobs = comm_tile_knobs();
    v.effective_knobs = [](const OpParams& p) {
        return std::map<std::string, int>{{"comm_tile_m", comm_tile_m(p)}, {"comm_tile_n", comm_tile_n(p)}};
    };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<MatmulAllScatterRun>(p); };
    return v;
}

std::vector<VariantDesc> variants() {
    VariantDesc bulk = base_variant("bulk_sync", "GEMM kernel, then the scatter kernel on the same stream (no overlap)");
    VariantDesc fused = base_variant("fused_sequential",
                                     "one AIC kernel: each finished tile stored from L0C into every rank's output "
                                     "(stream_k/hybrid: a MIX kernel, split tiles stored from UB after their fix-up)");
    fused.schedules = gemm_schedule_names();
    fused.faults.push_back("skip_fixup_partial");
    fused.validate = validate_fused;
    fused.knobs.clear();  // no comm tiles: the cube stores whole tiles
    fused.effective_knobs = nullptr;
    VariantDesc pc = base_variant("producer_consumer",
                                  "GEMM (AIC) and scatter (AIV) kernels on two streams; the GEMM flags each stored "
                                  "tile, the scatter waits on it and pushes it to every peer");
    VariantDesc spec = base_variant("specialized",
                                    "one MIX kernel: gemm_blocks clusters compute and flag tiles, the other clusters' "
                                    "AIVs scatter them");
    spec.constraints += "; 1 <= gemm-blocks < total-blocks <= clusters";
    spec.validate = validate_specialized;
    spec.schedules = gemm_schedule_names();
    spec.faults.push_back("skip_fixup_partial");
    spec.knobs.push_back(KnobDesc{"gemm_blocks", {"--gemm_sms"},
                                  "specialized: clusters computing the GEMM (Iris's --gemm_sms; default: 5/6 of the total)",
                                  {2, 4, 8, 12, 16, 20}});
    spec.knobs.push_back(KnobDesc{"total_blocks", {"--total_sms"},
                                  "specialized: clusters of the MIX kernel (Iris's --total_sms; default: --compute-blocks)",
                                  {}});
    spec.effective_knobs = [](const OpParams& p) {
        return std::map<std::string, int>{{"comm_tile_m", comm_tile_m(p)}, {"comm_tile_n", comm_tile_n(p)},
                                          {"gemm_blocks", gemm_blocks(p)}, {"total_blocks", total_blocks(p)}};
    };
    return {bulk, fused, pc, spec};
}

}  // namespace

const OpDesc& matmul_all_scatter_op() {
    static const OpDesc op = [] {
        OpDesc d;
        d.name = "matmul_all_scatter";
        d.title = "GEMM + AllScatter";
        d.doc = "A replicated, B split by columns; each rank computes its column block of C and sends it to every rank";
        d.sharding = Sharding{Split::Replicated, Split::Cols, false, Split::Replicated};
        d.comm_kind = "allscatter";
        d.comm_payload_bytes = [](const OpParams& p) {  // the M x N/W blocks of the n-1 peers
            return p.ranks > 0 ? double(p.m) * (double(p.n) / p.ranks) * dtype_bytes(p.out_dtype) * (p.ranks - 1) : 0.0;
        };
        d.variants = variants();
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
