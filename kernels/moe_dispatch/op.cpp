// moe_dispatch: moe_ffn's FrontReorder and Dispatch stages alone, on the AIVs (docs/ops/moe_dispatch.md).
// Every rank holds M tokens x [M, K] (bf16 or fp16) and their topK routes; each rank's output is
// what its local experts receive, expert-major (sources in rank order inside an expert): one
// packed row per route, K int8 and s1 (fp32, 8 times), the published kernel's gmA. The stage
// code is moe_ffn's (kernels/moe_ffn/moe_stages*.cpp), with moe_ffn's buffers and routing.
#include "kernels/moe_dispatch/op.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/moe_ffn/moe_data.hpp"
#include "kernels/moe_ffn/moe_stage_alone.hpp"
#include "kernels/moe_ffn/moe_stages.hpp"
#include "sim/runtime/runtime.hpp"

namespace tandem::kernels {

namespace {

using namespace moe;

// FrontReorder's UB: a token's bf16, fp32 and |x| rows, the packed row and two sort chunks.
std::int64_t front_ub_bytes(const MoeShape& s) {
    return std::int64_t{s.k} * (2 + 4 + 4 + 1) + 32 + 2LL * 4 * std::min(s.routes(), kSortChunk) + 1024 + 64;
}

void validate_dispatch(const OpParams& p, const BufferLimits& lim) {
    check_stage_alone(p, lim, front_ub_bytes, "FrontReorder holds a token's rows and two sort chunks", "FrontReorder");
}

// The output's shape: a row per route a rank's experts receive (the most any rank receives),
// K int8 and the 32-byte scale.
std::array<int, 2> received_rows_shape(const OpParams& p) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    return {std::max(1, t.max_recv), t.shape.packed_row_bytes()};
}

// Rank `rank`'s received rows from every source rank's tokens: the packed row of route (t, k) of
// source src at the rank's row recv_row(rank, e, src) + i, its i-th row for local expert e; rows
// past what the rank receives are zero.
std::vector<float> golden_received(const OpParams& p, int rank, const std::vector<OwnMathInput>& x) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    const MoeShape& s = t.shape;
    const int K = s.k, P = s.packed_row_bytes();
    const std::array<int, 2> shape = received_rows_shape(p);
    std::vector<float> out(static_cast<std::size_t>(shape[0]) * P, 0.0f);
    std::vector<float> xf(static_cast<std::size_t>(K));
    std::vector<std::int8_t> q(static_cast<std::size_t>(P));
    for (int e = 0; e < s.experts; ++e) {
        const int g = t.global_expert(rank, e);
        for (int src = 0; src < s.ranks; ++src) {
            const auto si = static_cast<std::size_t>(src);
            const int rows = t.count[si][static_cast<std::size_t>(g)], first = t.first_row[si][static_cast<std::size_t>(g)];
            for (int i = 0; i < rows; ++i) {
                const int route = t.source_route[si][static_cast<std::size_t>(first + i)];
                const int tok = route / s.topk;
                for (int c = 0; c < K; ++c) xf[static_cast<std::size_t>(c)] = x[si].at(tok, c);
                const float s1 = quantize_row(xf.data(), K, q.data());
                for (int j = 0; j < 8; ++j) std::memcpy(q.data() + K + 4 * j, &s1, 4);
                float* row = out.data() + static_cast<std::size_t>(t.recv_row(rank, e, src) + i) * P;
                for (int c = 0; c < P; ++c) row[c] = static_cast<float>(q[static_cast<std::size_t>(c)]);
            }
        }
    }
    return out;
}

// How the rows move: the destination pulls them (moe_ffn's Dispatch), or their source pushes them
// into the destination's window, which then copies them out.
enum class Way { Pull, Push };

class MoeDispatchRun final : public MoeStageAloneRun {
public:
    MoeDispatchRun(const OpParams& p, Way way)
        : MoeStageAloneRun(p, "moe_dispatch", p.fault == "drop_last_row" ? Fault::DropLastPulledRow : Fault::None,
                           /*inbox=*/way == Way::Push),
          way_(way) {}

    std::vector<std::string> streams() const override { return {"dispatch"}; }

    ViewPlan view(ViewKind kind, int rank) const override {
        const std::shared_ptr<const MoeRank> a = ranks_[static_cast<std::size_t>(rank)];
        ViewPlan plan;
        plan.reset = [this, rank](HostContext& host) { reset_signals(host, rank); };
        // Compute-only: FrontReorder alone (the route sort, the quantisation, the count rows);
        // sequential: it, then Dispatch as its own launch; pipelined: the two in one launch.
        if (kind == ViewKind::Pipelined) {
            plan.phases.push_back(phase(PhaseRole::Both, front_reorder_kernel(a, blocks_, then())));
            return plan;
        }
        plan.phases.push_back(phase(PhaseRole::Compute, front_reorder_kernel(a, blocks_, ThenDispatch::None)));
        if (kind == ViewKind::Sequential)
            plan.phases.push_back(phase(PhaseRole::Comm, way_ == Way::Pull ? dispatch_kernel(a, blocks_) : push_dispatch_kernel(a, blocks_)));
        return plan;
    }

private:
    ThenDispatch then() const { return way_ == Way::Pull ? ThenDispatch::Pull : ThenDispatch::Push; }
    Way way_;

    void adapt(MoeRank& a, const RankTensors& t) const override { a.recv = t.out; }  // the received rows are the output
};

// Packed rows rank 0 receives from its peers (its own stay local).
double dispatch_payload_bytes(const OpParams& p) {
    const RouteTables t = make_route_tables(moe_shape_of(p));
    return t.rows_from_peers(0) * t.shape.packed_row_bytes();
}

}  // namespace

const OpDesc& moe_dispatch_op() {
    static const OpDesc op = [] {
        OpDesc d = stage_alone_op("moe_dispatch", "MoE dispatch (EP all-to-all-v out)",
                                  "the MoE layer's dispatch alone (moe_ffn's FrontReorder and Dispatch stages, AIV only): "
                                  "tokens sorted by expert, quantised to int8, moved to the ranks holding their experts (pulled by them, or pushed "
                                  "by their sources)",
                                  dispatch_payload_bytes);
        // The output is what the rank's experts receive, a packed row per route.
        d.sharding.out_shape = received_rows_shape;
        VariantDesc pull = stage_alone_variant(
            "pull",
            "every AIV block sorts its chunks of routes, quantises its tokens and stores a packed row per route into its "
            "rank's window; after the count rows' all-rank barrier, (expert, source) pairs dealt over the blocks pull their "
            "rows (remote TLOADs of up to two rows) into the received buffer",
            "K a multiple of 256 and <= about 8K (UB); 1 <= comm blocks <= AIV cores; bf16 (or fp16) x; int8 out (K values "
            "and the fp32 scale's 32 bytes per row); N is not read");
        VariantDesc push = stage_alone_variant(
            "push",
            "the way CANN's EP dispatch moves the rows (AIV-Direct: the vector cores write straight into the peers' "
            "windows, CloudMatrix384 4.2.1): FrontReorder as pull; then every AIV block stores its share of the rank's "
            "sorted rows (a local TLOAD and a remote TSTORE of up to two rows) into the inbox in the window of the rank "
            "holding their expert; an all-rank barrier; then every block copies its share of the rank's inbox to the "
            "received buffer, which is not in the window",
            "as pull; the window also holds the inbox, a packed row per received route",
            /*inbox=*/true);
        for (auto [v, way] : {std::pair{&pull, Way::Pull}, std::pair{&push, Way::Push}}) {
            v->out_dtypes = {DType::I8};
            v->faults = {"drop_last_row"};
            v->validate = validate_dispatch;
            v->make = [way](const OpParams& p) { return std::make_unique<MoeDispatchRun>(p, way); };
        }
        d.variants = {pull, push};
        d.own_math = OwnMath{golden_received, 0.0, 0.0, 0.0,
                             "exact: every received int8 value and scale byte as the golden's per-token quantisation "
                             "(s1 = max|x|/127, q = rint(x 127/max)) of the source rank's token",
                             nullptr, "int8: a row per route its experts receive (K values, then the fp32 scale's 32 bytes)"};
        return d;
    }();
    return op;
}

}  // namespace tandem::kernels
