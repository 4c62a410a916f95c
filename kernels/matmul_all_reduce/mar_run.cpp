#include "kernels/matmul_all_reduce/mar_run.hpp"

#include "kernels/common/collectives/all_reduce.hpp"
#include "kernels/common/gemm_tiles.hpp"
#include "kernels/common/int_math.hpp"
#include "kernels/common/view_plans.hpp"

#include <fmt/format.h>

namespace tandem::kernels::mar {

int padded_m(const OpParams& p) { return round_up(p.m, p.base_m); }
int padded_n(const OpParams& p) { return round_up(p.n, p.base_n); }

collectives::CollectiveLayout baseline_layout(const OpParams& p) {
    const int m = padded_m(p);
    return collectives::CollectiveLayout(p.ranks, collectives::make_comm_grid(m, padded_n(p), p.out_dtype, m),
                                         p.out_dtype, std::max(1, p.comm_blocks));
}

GemmSchedule mar_schedule(const OpParams& p) {
    const int tiles = (padded_m(p) / p.base_m) * (padded_n(p) / p.base_n);
    return GemmSchedule(parse_gemm_schedule(p.schedule), tiles, k_panels_of(p.k, p.base_n, p.dtype),
                        std::max(1, p.compute_blocks));
}

namespace {
std::int64_t stream_k_bytes(const OpParams& p) {
    if (p.schedule == "data_parallel") return 0;
    return stream_k_layout(mar_schedule(p), p.base_m, p.base_n).bytes;
}
}  // namespace

double mar_workspace_bytes(const OpParams& p, double variant_bytes) {
    return static_cast<double>(round_up(baseline_layout(p).bytes(), kRegionAlignBytes)) +
           round_up(static_cast<std::int64_t>(variant_bytes), kRegionAlignBytes) +
           static_cast<double>(stream_k_bytes(p));
}

MarRun::MarRun(const OpParams& p, std::int64_t variant_bytes)
    : params_(p), layout_(baseline_layout(p)), variant_offset_(round_up(layout_.bytes(), kRegionAlignBytes)), variant_bytes_(variant_bytes),
      stream_k_offset_(variant_offset_ + round_up(variant_bytes, kRegionAlignBytes)),
      workspace_(static_cast<std::size_t>(p.ranks), nullptr),
      workspace_base_(static_cast<std::size_t>(p.ranks), -1), tensors_(static_cast<std::size_t>(p.ranks)) {}

void MarRun::allocate_workspace(int rank, GlobalMemory& gm) {
    workspace_[static_cast<std::size_t>(rank)] =
        &gm.allocate("mar_workspace", stream_k_offset_ + stream_k_bytes(params_), /*shared=*/true);
    workspace_base_[static_cast<std::size_t>(rank)] = workspace_[static_cast<std::size_t>(rank)]->base;
}

std::string MarRun::signal_name(int rank, std::int64_t address) const {
    if (!stream_k()) return {};
    const StreamKLayout l = stream_k_layout(mar_schedule(params_), params_.base_m, params_.base_n);
    const std::int64_t first = workspace_base_.at(static_cast<std::size_t>(rank)) + stream_k_offset_ + l.counters_offset;
    if (address < first || address >= first + 4 * std::int64_t{l.slots}) return {};
    return fmt::format("partial_ready[slot={}]", (address - first) / 4);
}

void MarRun::bind(int rank, const RankTensors& t) { tensors_[static_cast<std::size_t>(rank)] = t; }

std::vector<GmTensor> MarRun::outputs() const {
    std::vector<GmTensor> out;
    for (const RankTensors& t : tensors_) out.push_back(t.out);
    return out;
}

collectives::CollectiveArgs MarRun::baseline_args(int rank) const {
    std::vector<collectives::CollectiveWorkspace> ws;
    for (const GmAllocation* a : workspace_) ws.push_back(collectives::CollectiveWorkspace{a, 0});
    return collectives::CollectiveArgs{layout_, collectives::collective_algo_for(params_.topology), rank, outputs(), ws};
}

StreamKGemm MarRun::stream_k_gemm(int rank) const {
    const GemmSchedule schedule = mar_schedule(params_);
    const StreamKLayout l = stream_k_layout(schedule, params_.base_m, params_.base_n);
    const SummedGemm g = gemm(rank);
    const GmAllocation& ws = workspace(rank);
    StreamKGemm sk{g.grid, schedule, g.bias, g.bias_kind, 0, params_.out_dtype, GmTensor{}, SignalAddr{}};
    if (l.slots > 0) {  // no split tile (e.g. tiles a multiple of the blocks): no partials
        sk.partials = GmTensor(ws, stream_k_offset_ + l.partials_offset, l.slots * params_.base_m, params_.base_n,
                               params_.base_n, DType::F32);
    }
    sk.counters = SignalAddr{rank, ws.base + stream_k_offset_ + l.counters_offset};
    sk.skip_partial = params_.fault == "skip_fixup_partial";
    return sk;
}

HostAction MarRun::reset_stream_k(int rank) const {
    if (!stream_k()) return {};
    const StreamKGemm sk = stream_k_gemm(rank);
    return [sk](HostContext& host) { reset_stream_k_counters(host, sk); };
}

ViewPlan MarRun::view(ViewKind kind, int rank) const {
    if (kind == ViewKind::Pipelined) return pipelined_view(rank);
    GemmThenComm parts;
    if (stream_k()) {
        TileSink sink;
        sink.targets = [g = gemm(rank).grid, c = tensors(rank).out](int t) { return std::vector<GmTensor>{g.c_tile(c, t)}; };
        parts.gemm = {kComputeStream, make_stream_k_gemm_kernel("MatmulPartialStreamKKernel", stream_k_gemm(rank), sink)};
    } else {
        parts.gemm = {kComputeStream, make_partial_gemm_kernel(gemm(rank), tensors(rank).out, params_.compute_blocks)};
    }
    parts.reset = reset_stream_k(rank);
    const collectives::CollectiveArgs args = baseline_args(rank);
    parts.comm = {kCommStream, collectives::make_all_reduce_kernel(args)};
    parts.comm_reset = [args](HostContext& host) { collectives::reset_collective_flags(host, args); };
    return gemm_then_comm_view(kind, parts, {});
}

}  // namespace tandem::kernels::mar
