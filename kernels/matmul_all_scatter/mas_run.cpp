#include "kernels/matmul_all_scatter/mas_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/collectives/scatter_tiles.hpp"
#include "kernels/common/comm_tile_knobs.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/op_checks.hpp"
#include "kernels/common/view_plans.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels::mas {

namespace {

int m_tiles(const OpParams& p) { return ceil_div(p.m, p.base_m); }
int block_tiles(const OpParams& p) { return m_tiles(p) * (p.n / p.ranks / p.base_n); }

bool uses_flags(const std::string& variant) { return variant == "producer_consumer" || variant == "specialized"; }

bool stream_k(const OpParams& p) { return p.schedule != "data_parallel"; }

// The schedule of a GEMM kernel of `blocks` blocks on this rank's column block.
GemmSchedule schedule_of(const OpParams& p, int blocks) {
    return GemmSchedule(parse_gemm_schedule(p.schedule), block_tiles(p), k_panels_of(p.k, p.base_n, p.dtype),
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

}  // namespace

// Clusters a MIX kernel can have on the chip at once.
int clusters_of(const BufferLimits& lim) { return std::min(lim.aic_cores, lim.aiv_cores / 2); }
int total_blocks(const OpParams& p) { return p.knob("total_blocks").value_or(p.compute_blocks); }
// Iris's default split is 256 of 304 CUs for the GEMM (about 5/6): the same share here.
int gemm_blocks(const OpParams& p) {
    const int total = total_blocks(p);
    return p.knob("gemm_blocks").value_or(std::max(1, total - std::max(1, total / 6)));
}

void validate_common(const OpParams& p, const BufferLimits& lim) {
    const double elem = dtype_bytes(p.dtype);
    check_int8_rules(p);
    check_gemm_tile(p, lim, [&lim, elem](double bm, double bn) { return gemm_tile_needs(bm, bn, lim, elem); });
    check_out_dtype_fp32_or_input(p);
    check_positive(kParamM, p.m, p.base_m, "base-m");
    check_positive(kParamK, p.k, p.base_n, "base-n");
    const std::int64_t block = std::int64_t{p.ranks} * p.base_n;
    check_positive(kParamN, p.n, block, "n*base-n");
    // M and K are padded; N is not: rank r's columns sit at r*N/W in every output, so a block
    // padded to whole tiles would overwrite its neighbour's.
    check_multiple(kParamN, p.n, block, "n*base-n",
                   "each rank's column block of C is whole base-n tiles (M and K may be anything)");
    check_comm_tile(p, lim, " (two sets of two)");
}

double workspace_bytes(const OpParams& p) {
    return (uses_flags(p.variant) ? 4.0 * m_tiles(p) * (static_cast<double>(p.n) / p.ranks / p.base_n) : 0.0) +
           static_cast<double>(stream_k_bytes(p));
}

MasRun::MasRun(const OpParams& p)
    : p_(p), tensors_(static_cast<std::size_t>(p.ranks)), flags_(static_cast<std::size_t>(p.ranks), -1),
      stream_k_(static_cast<std::size_t>(p.ranks), nullptr), stream_k_base_(static_cast<std::size_t>(p.ranks), -1) {}

void MasRun::allocate_workspace(int rank, GlobalMemory& gm) {
    if (stream_k()) {
        stream_k_[static_cast<std::size_t>(rank)] = &gm.allocate("stream_k_partials", stream_k_bytes(p_));
        stream_k_base_[static_cast<std::size_t>(rank)] = stream_k_[static_cast<std::size_t>(rank)]->base;  // for signal_name
    }
    if (!uses_flags(p_.variant)) return;
    flags_[static_cast<std::size_t>(rank)] = gm.allocate("tile_ready_flags", 4 * std::int64_t{block_tiles(p_)}).base;
}

ViewPlan MasRun::view(ViewKind kind, int rank) const {
    if (kind == ViewKind::Pipelined) return pipelined_view(rank);
    GemmThenComm parts;
    parts.gemm = {kGemmStream, local_gemm(rank)};
    parts.comm = {kCommStream, scatter(rank)};
    parts.reset = reset_local_stream_k(rank);
    return gemm_then_comm_view(kind, parts, {});
}

StreamKGemm MasRun::local_stream_k(int rank) const {
    const GemmBlockArgs local = args(rank, /*flagged=*/false);
    return stream_k() ? stream_k_gemm(local, rank, p_.compute_blocks) : StreamKGemm{local.grid(), schedule_of(p_, 1)};
}

KernelLaunch MasRun::local_gemm(int rank) const {
    if (stream_k())
        return make_stream_k_gemm_kernel("MatmulScatterGemmStreamKKernel", local_stream_k(rank),
                                         args(rank, false).to_own_output());
    return make_block_gemm_kernel("MatmulScatterGemmKernel", args(rank, false), p_.compute_blocks);
}

HostAction MasRun::reset_local_stream_k(int rank) const {
    return [sk = stream_k(), local_sk = local_stream_k(rank)](HostContext& host) {
        if (sk) reset_stream_k_counters(host, local_sk);
    };
}

KernelLaunch MasRun::scatter(int rank) const {
    return collectives::make_scatter_kernel("AllGatherColumnBlocksKernel", args(rank, false).scatter(), p_.comm_blocks);
}

void MasRun::reset_flags(HostContext& host, int rank) const {
    host.write_signals(flags_[static_cast<std::size_t>(rank)], block_tiles(p_), 0);
}

std::string MasRun::signal_name(int rank, std::int64_t address) const {
    if (stream_k()) {  // either schedule's counters (compute_blocks or gemm_blocks blocks)
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

StreamKGemm MasRun::stream_k_gemm(const GemmBlockArgs& a, int rank, int blocks) const {
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

GemmBlockArgs MasRun::args(int rank, bool flagged) const {
    GemmBlockArgs a = block_args_of(p_, tensors_[static_cast<std::size_t>(rank)], rank);
    const int cols = p_.n / p_.ranks;
    a.col0 = rank * cols;
    for (const RankTensors& other : tensors_) a.out_block.push_back(other.out.sub(0, a.col0, other.out.rows(), cols));
    if (flagged) a.ready = SignalAddr{rank, flags_[static_cast<std::size_t>(rank)]};
    return a;
}

}  // namespace tandem::kernels::mas
