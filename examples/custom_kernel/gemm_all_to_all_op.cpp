// gemm_all_to_all's description: what the host needs to run it like a shipped op (sharding, so
// it can cut inputs and compute the golden; validation; padding; workspace; views) and the one
// OpInstance that places its memory and says which kernels run in each view.
#include <algorithm>

#include <fmt/format.h>

#include "examples/custom_kernel/gemm_all_to_all.hpp"
#include "examples/custom_kernel/gemm_all_to_all_kernels.hpp"

namespace gemm_all_to_all {

namespace {

constexpr int kGemmStream = 0;
constexpr int kCommStream = 1;
constexpr std::int64_t kPushPieceBytes = 32 * 1024;  // a UB piece, as the shipped collectives' comm tiles

int rows_per_rank(const OpParams& p) { return p.m / p.ranks; }
int tiles_per_rank(const OpParams& p) { return rows_per_rank(p) / p.base_m * (p.n / p.base_n); }
std::int64_t c_local_bytes(const OpParams& p) { return std::int64_t{rows_per_rank(p)} * p.n * dtype_bytes(p.out_dtype); }
std::int64_t signal_bytes(const OpParams& p) { return 4 * (std::int64_t{tiles_per_rank(p)} + 1); }  // ready[], arrivals

// The largest divisor of base_m whose push_rows x base_n piece fits kPushPieceBytes.
int push_rows(const OpParams& p) {
    const std::int64_t row_bytes = std::int64_t{p.base_n} * dtype_bytes(p.out_dtype);
    int best = 1;
    for (int d = 1; d <= p.base_m; ++d)
        if (p.base_m % d == 0 && d * row_bytes <= kPushPieceBytes) best = d;
    return best;
}

void validate(const OpParams& p, const BufferLimits& lim) {
    check_gemm_tile(p, lim, [&lim](double bm, double bn) { return gemm_tile_needs(bm, bn, lim); });
    if (p.out_dtype != DType::F32 && p.out_dtype != p.dtype) {
        throw ParamError({{kParamOutDtype, dtype_name(p.out_dtype)}},
                         fmt::format("the output is fp32 or the input dtype ({})", dtype_name(p.dtype)));
    }
    // Rank r's rows land at r*M/n and its column blocks at c*N/n of every output: a block padded
    // to whole tiles would overwrite its neighbour's, so M and N are whole tiles per rank (K is padded).
    const std::int64_t m_step = std::int64_t{p.ranks} * p.base_m;
    const std::int64_t n_step = std::int64_t{p.ranks} * p.base_n;
    check_positive(kParamM, p.m, m_step, "n*base-m");
    check_multiple(kParamM, p.m, m_step, "n*base-m", "each rank's rows of A are whole base-m tiles");
    check_positive(kParamN, p.n, n_step, "n*base-n");
    check_multiple(kParamN, p.n, n_step, "n*base-n", "each rank's column block of C is whole base-n tiles");
    check_positive(kParamK, p.k, p.base_n, "base-n");
    if (p.comm_blocks > lim.aiv_cores) {
        // Block 0 waits for every block's arrival: the blocks must all be on cores at once.
        throw ParamError({{kParamCommBlocks, p.comm_blocks}},
                         fmt::format("the push kernel's blocks must all be resident ({} AIV cores on {})", lim.aiv_cores,
                                     lim.profile_name),
                         {{kParamCommBlocks, lim.aiv_cores}});
    }
}

class GemmAllToAllRun final : public OpInstance {
public:
    explicit GemmAllToAllRun(const OpParams& p)
        : p_(p), tensors_(static_cast<std::size_t>(p.ranks)), c_local_(static_cast<std::size_t>(p.ranks), nullptr),
          signals_(static_cast<std::size_t>(p.ranks), nullptr) {}

    std::vector<std::string> streams() const override { return {"gemm", "comm"}; }

    void allocate_workspace(int rank, GlobalMemory& gm) override {
        c_local_[static_cast<std::size_t>(rank)] = &gm.allocate("a2a_c_local", c_local_bytes(p_));
        // In the window: peers add to the arrival counter.
        signals_[static_cast<std::size_t>(rank)] = &gm.allocate("a2a_signals", signal_bytes(p_), /*shared=*/true);
    }

    void bind(int rank, const RankTensors& t) override { tensors_[static_cast<std::size_t>(rank)] = t; }

    ViewPlan view(ViewKind kind, int rank) const override {
        const KernelLaunch gemm = make_gemm_flag_kernel(gemm_args(rank), p_.compute_blocks);
        const KernelLaunch push = make_push_kernel(push_args(rank), p_.comm_blocks);
        ViewPlan plan;
        // Untimed, before each view: flags and the arrival counter to zero (a view never sees the
        // flags of the previous one, nor an API call those of an earlier call).
        const GmAllocation* sig = signals_[static_cast<std::size_t>(rank)];
        const int words = tiles_per_rank(p_) + 1;
        plan.reset = [sig, words](HostContext& host) { host.write_signals(sig->base, words, 0); };
        if (kind == ViewKind::ComputeOnly) {  // the GEMM alone (nobody waits on its flags)
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kGemmStream, gemm}}}};
        } else if (kind == ViewKind::Sequential) {  // GEMM, then the all-to-all (every flag already set)
            plan.phases = {ViewPhase{PhaseRole::Compute, {}, {{kGemmStream, gemm}}},
                           ViewPhase{PhaseRole::Comm, {}, {{kCommStream, push}}}};
        } else {  // fused: the push kernel first (it waits on the first flag), the GEMM on its own stream
            plan.phases = {ViewPhase{PhaseRole::Both, {}, {{kCommStream, push}, {kGemmStream, gemm}}}};
        }
        return plan;
    }

    std::string signal_name(int rank, std::int64_t address) const override {
        const GmAllocation* sig = signals_.at(static_cast<std::size_t>(rank));
        if (sig == nullptr || address < sig->base || address >= sig->base + signal_bytes(p_)) return {};
        const std::int64_t i = (address - sig->base) / 4;
        return i == tiles_per_rank(p_) ? std::string("arrivals") : fmt::format("ready[{}]", i);
    }

private:
    SignalAddr ready_of(int rank) const { return SignalAddr{rank, signals_[static_cast<std::size_t>(rank)]->base}; }

    GmTensor c_local_of(int rank) const {
        return GmTensor(*c_local_[static_cast<std::size_t>(rank)], 0, rows_per_rank(p_), p_.n, p_.n, p_.out_dtype);
    }

    GemmFlagArgs gemm_args(int rank) const {
        const RankTensors& t = tensors_[static_cast<std::size_t>(rank)];
        GemmFlagArgs a;
        a.a = t.a;
        a.b = t.b;
        a.bias = t.bias;
        a.bias_kind = p_.bias;
        a.row0 = rank * rows_per_rank(p_);
        a.c_local = c_local_of(rank);
        a.base_m = p_.base_m;
        a.base_n = p_.base_n;
        a.ready = ready_of(rank);
        a.skip_last_k_panel = p_.fault == "skip_last_k_panel";
        a.flag_before_store = p_.fault == "flag_before_store";
        return a;
    }

    PushArgs push_args(int rank) const {
        PushArgs s;
        s.my_rank = rank;
        s.c_local = c_local_of(rank);
        for (const RankTensors& t : tensors_) s.out.push_back(t.out.sub(0, 0, p_.m, p_.n / p_.ranks));
        s.base_m = p_.base_m;
        s.base_n = p_.base_n;
        s.push_rows = push_rows(p_);
        s.ready = ready_of(rank);
        for (int r = 0; r < p_.ranks; ++r)
            s.arrivals.push_back(SignalAddr{r, signals_[static_cast<std::size_t>(r)]->base + 4 * std::int64_t{tiles_per_rank(p_)}});
        if (p_.fault == "skip_peer") s.skip_rank = (rank + 1) % p_.ranks;
        return s;
    }

    OpParams p_;
    std::vector<RankTensors> tensors_;
    std::vector<const GmAllocation*> c_local_;  // per rank: C_r, the GEMM's output
    std::vector<const GmAllocation*> signals_;  // per rank: ready[tiles], arrivals
};

}  // namespace

std::shared_ptr<const OpDesc> make_op() {
    auto d = std::make_shared<OpDesc>();
    d->name = kOpName;
    d->title = "GEMM + AllToAll";
    d->doc = "A split by rows, B replicated; rank r computes its rows of C and sends column block c of them to rank c";
    d->sharding = Sharding{Split::Rows, Split::Replicated, false, Split::Cols};
    d->comm_kind = "alltoall";
    d->comm_payload_bytes = [](const OpParams& p) {  // the M/n x N/n blocks of the n-1 peers
        return double(p.m) / p.ranks * (double(p.n) / p.ranks) * dtype_bytes(p.out_dtype) * (p.ranks - 1);
    };
    VariantDesc v;
    v.name = "producer_consumer";
    v.doc = "GEMM (AIC) flags each tile; the push kernel (AIV, own stream) sends it to its owner as soon as it is flagged";
    v.constraints = "M % (n*base-m) == 0, N % (n*base-n) == 0 (K padded); comm-blocks <= AIV cores";
    v.dtypes = {DType::F16, DType::BF16};
    v.out_dtypes = {DType::F32, DType::F16, DType::BF16};
    v.takes_bias = true;
    v.output_in_window = true;  // peers store their blocks into it
    // flag_before_store: a synchronisation bug the timing may hide (--sanitize names it).
    v.faults = {"skip_last_k_panel", "skip_peer", "flag_before_store"};
    v.validate = validate;
    v.padding = [](const OpParams& p) { return Padding{p.base_m, p.base_n, p.base_n}; };
    v.workspace_bytes = [](const OpParams& p) { return double(c_local_bytes(p) + signal_bytes(p)); };
    v.make = [](const OpParams& p) -> std::unique_ptr<OpInstance> { return std::make_unique<GemmAllToAllRun>(p); };
    d->variants = {v};
    return d;
}

}  // namespace gemm_all_to_all
