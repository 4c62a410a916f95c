// moe_combine: moe_ffn's Combine and Unpermute stages alone, on the AIVs (docs/ops/moe_combine.md).
// Every rank holds the output rows of its local experts (one per route they received, fp16, with
// a per-row scale s2) and its own tokens' routes and gate weights; each rank's output is
// out[t] = fp16(sum_k prob[t,k] * fp16(row(t,k) * s2)), [M, K] fp16. The stage code is moe_ffn's
// (kernels/moe_ffn/moe_stages*.cpp), with moe_ffn's buffers and routing.
//
// The experts' output rows are the caller's tokens: received row j of rank r holds rank r's
// token (j mod M), as fp16, and s2 = 1 + ((j + r) mod 5) / 8 (exact in binary). So the output
// depends on the caller's A, a zero A gives a zero output, and the golden reads the ranks' A.
#include "kernels/moe_combine/op.hpp"

#include <algorithm>

#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_stage_alone.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

using namespace moe;

float fp16_rounded(float v) { return half_to_float(float_to_half(v)); }

// The scale of received row j of rank r (the expert output's s2).
float row_scale(int rank, int j) { return 1.0f + static_cast<float>((j + rank) % 5) / 8.0f; }

std::int64_t combine_block_ub_bytes(const MoeShape& s) { return combine_ub_bytes(s) + unpermute_ub_bytes(s); }

void validate_combine(const OpParams& p, const BufferLimits& lim) {
    check_stage_alone(p, lim, combine_block_ub_bytes, "Combine holds two rows in and out, an fp32 row and Unpermute's chunks",
                      "Combine");
}

// Rank `rank`'s output: each route's row from the rank holding its expert, x s2, summed with the
// gate weights in route order, as Combine and Unpermute round it.
std::vector<float> golden_combined(const OpParams& p, int rank, const std::vector<OwnMathInput>& x) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    const MoeShape& s = t.shape;
    const int K = s.k, M = s.m;
    const auto ri = static_cast<std::size_t>(rank);
    std::vector<float> out(static_cast<std::size_t>(M) * K, 0.0f);
    std::vector<float> sum(static_cast<std::size_t>(K));
    for (int tok = 0; tok < M; ++tok) {
        for (int k = 0; k < s.topk; ++k) {
            const int route = tok * s.topk + k;
            const int g = t.expert[ri][static_cast<std::size_t>(route)];
            const int dst = g / s.experts, e = g % s.experts;
            const int j = t.recv_row(dst, e, rank) + t.sorted_row[ri][static_cast<std::size_t>(route)] -
                          t.first_row[ri][static_cast<std::size_t>(g)];
            const float s2 = row_scale(dst, j), prob = prob_value(s, rank, tok, k);
            const OwnMathInput& xd = x[static_cast<std::size_t>(dst)];
            for (int c = 0; c < K; ++c) {
                const float v = fp16_rounded(fp16_rounded(xd.at(j % M, c)) * s2) * prob;
                sum[static_cast<std::size_t>(c)] = k == 0 ? v : sum[static_cast<std::size_t>(c)] + v;
            }
        }
        for (int c = 0; c < K; ++c) out[static_cast<std::size_t>(tok) * K + c] = fp16_rounded(sum[static_cast<std::size_t>(c)]);
    }
    return out;
}

class MoeCombineRun final : public MoeStageAloneRun {
public:
    explicit MoeCombineRun(const OpParams& p)
        : MoeStageAloneRun(p, "moe_combine", p.fault == "skip_last_route" ? Fault::SkipLastRoute : Fault::None) {}

    std::vector<std::string> streams() const override { return {"combine"}; }

    ViewPlan view(ViewKind kind, int rank) const override {
        const std::shared_ptr<const MoeRank> a = ranks_[static_cast<std::size_t>(rank)];
        const std::int64_t base = mem_.window_bases[static_cast<std::size_t>(rank)];
        const int E = tables_->shape.experts;
        ViewPlan plan;
        plan.reset = [this, a, rank, base, E](HostContext& host) {
            reset_signals(host, rank);
            host.write_signals(base + lay_.counters + 4LL * lay_.slots.gmm2_done, E, 1);  // every expert's rows are ready
            if (functional_) fill_expert_rows(*a);
        };
        // Compute-only: Unpermute alone (the weighted sum of the rows in the rank's window);
        // sequential: Combine (with its all-rank barrier), then Unpermute as its own launch;
        // pipelined: the two in one launch.
        if (kind == ViewKind::Pipelined) {
            plan.phases.push_back(phase(PhaseRole::Both, combine_kernel(a, blocks_, true)));
            return plan;
        }
        if (kind == ViewKind::Sequential) plan.phases.push_back(phase(PhaseRole::Comm, combine_kernel(a, blocks_, false)));
        plan.phases.push_back(phase(PhaseRole::Compute, unpermute_kernel(a, blocks_)));
        return plan;
    }

private:
    // What Dispatch left: the route -> row index (expandedRowIdx), and the experts' s2 per row.
    void fill_local(int rank, const GmAllocation& l) const override {
        std::byte* d = const_cast<std::byte*>(l.data.data());  // before any kernel runs
        const auto ri = static_cast<std::size_t>(rank);
        auto* rows = reinterpret_cast<std::int32_t*>(d + lay_.row_of_route);
        for (int i = 0; i < tables_->shape.routes(); ++i) rows[i] = tables_->sorted_row[ri][static_cast<std::size_t>(i)];
        auto* s2 = reinterpret_cast<float*>(d + lay_.swiglu_s);
        for (int j = 0; j < tables_->recv_total[ri]; ++j)
            for (int c = 0; c < 8; ++c) s2[std::int64_t{j} * 8 + c] = row_scale(rank, j);
    }

    // The experts' output rows from the rank's tokens (the caller's A as placed for this call):
    // received row j holds token (j mod M) as fp16.
    void fill_expert_rows(const MoeRank& a) const {
        const MoeShape& s = tables_->shape;
        const OwnMathInput x{reinterpret_cast<const std::uint16_t*>(a.x.element_ptr(0, 0)), a.x.ld(), a.x.rows(), a.x.cols(),
                             a.x.dtype()};
        for (int j = 0; j < tables_->recv_total[static_cast<std::size_t>(a.rank)]; ++j) {
            auto* row = reinterpret_cast<std::uint16_t*>(const_cast<std::byte*>(a.gmm2_out.element_ptr(j, 0)));
            for (int c = 0; c < s.k; ++c) row[c] = float_to_half(x.at(j % s.m, c));
        }
    }
};

// fp16 rows rank 0 gets back from its peers (its routes to their experts).
double combine_payload_bytes(const OpParams& p) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    return t.rows_back_from_peers(0) * 2.0 * t.shape.k;
}

}  // namespace

const OpDesc& moe_combine_op() {
    static const OpDesc op = [] {
        // x (A): the experts' output rows are made of it; the output has its shape.
        OpDesc d = stage_alone_op("moe_combine", "MoE combine (EP all-to-all-v back)",
                                  "the MoE layer's combine alone (moe_ffn's Combine and Unpermute stages, AIV only): the "
                                  "experts' rows x s2 pushed to their tokens' ranks, summed there with the gate weights",
                                  combine_payload_bytes);
        VariantDesc v = stage_alone_variant(
            "push",
            "every AIV block takes its share of each expert's rows: the fp16 row and s2 loaded, x s2, fp16, a remote store "
            "into the source rank's window (rows double-buffered); an all-rank barrier; then each block sums its share of the "
            "tokens' routes from its own window with the gate weights",
            "K a multiple of 256 and <= about 8K (UB); 1 <= comm blocks <= AIV cores; bf16 (or fp16) x; fp16 out; N is not "
            "read");
        v.out_dtypes = {DType::F16};
        v.faults = {"skip_last_route"};
        v.validate = validate_combine;
        v.make = [](const OpParams& p) { return std::make_unique<MoeCombineRun>(p); };
        d.variants = {v};
        d.own_math = OwnMath{golden_combined, 1e-4, 1e-3, 1e-3,
                             "moe_ffn's (the published host's): |a - e| > atol + rtol |e| with atol 1e-4, rtol 1e-3, at most "
                             "floor(rtol x numel) elements may err",
                             nullptr, "out: M x K fp16, its tokens' weighted rows"};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
