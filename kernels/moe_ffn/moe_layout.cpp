// moe_ffn's buffers in each rank's window and local memory (moe_layout.hpp).
#include "kernels/moe_ffn/moe_layout.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/int_math.hpp"

namespace tandem::kernels::moe {

namespace {
std::int64_t align64(std::int64_t v) { return round_up(v, std::int64_t{64}); }
}  // namespace

MoeLayout::MoeLayout(const RouteTables& t, bool ffn, bool with_inbox) : slots(t.shape.ranks, t.shape.experts) {
    const MoeShape& s = t.shape;
    const std::int64_t R = s.routes(), K = s.k, P = s.packed_row_bytes();
    // Without the FFN (the stages alone), no weights, scales or GMM1/SwiGLU buffers.
    const std::int64_t N = ffn ? s.n : 0, H = ffn ? s.half_n() : 0, E = ffn ? s.experts : 0;
    const std::int64_t rows = std::max(1, t.max_recv);
    global_experts = s.global_experts();
    packed = 0;
    combined = align64(packed + R * P);
    count_rows = align64(combined + R * K * 2);
    counters = align64(count_rows + std::int64_t{s.ranks} * 256 * 4);
    barrier1 = DeviceBarrierLayout(s.ranks, align64(counters + 4LL * slots.table.words()));
    barrier2 = DeviceBarrierLayout(s.ranks, align64(barrier1.region_offset + barrier1.bytes()));
    inbox = align64(barrier2.region_offset + barrier2.bytes());
    window = align64(inbox + (with_inbox ? rows * P : 0));
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
    this->ffn = ffn;
    has_inbox = with_inbox;
}

std::string MoeLayout::signal_name(int rank, std::int64_t off) const {
    if (off < 0 || off >= window) return {};
    if (off >= inbox) return {};
    // The second barrier follows Combine in moe_ffn and moe_combine, the pushed rows in moe_dispatch.
    if (off >= barrier2.region_offset) return (has_inbox ? "pushed_" : "combine_") + barrier2.name_of(rank, off);
    if (off >= barrier1.region_offset) return "reorder_" + barrier1.name_of(rank, off);
    if (off >= counters) return slots.table.name_of(static_cast<int>((off - counters) / 4));
    return {};
}

MoeAllocations::MoeAllocations(int ranks)
    : window(static_cast<std::size_t>(ranks), nullptr), local(static_cast<std::size_t>(ranks), nullptr),
      window_bases(static_cast<std::size_t>(ranks), -1) {}

const GmAllocation& MoeAllocations::allocate(int rank, GlobalMemory& gm, const MoeLayout& lay) {
    const GmAllocation& w = gm.allocate("moe_window", lay.window, /*shared=*/true);
    const GmAllocation& l = gm.allocate("moe_local", lay.local);
    window[static_cast<std::size_t>(rank)] = &w;
    local[static_cast<std::size_t>(rank)] = &l;
    window_bases[static_cast<std::size_t>(rank)] = w.base;
    return l;
}

std::shared_ptr<MoeRank> bind_moe_rank(const char* op, int rank, const RankTensors& t, const MoeLayout& lay,
                                       const MoeAllocations& mem, std::shared_ptr<const RouteTables> tables,
                                       std::shared_ptr<const MoeSlots> slots, Fault fault) {
    const MoeShape& s = tables->shape;
    auto a = std::make_shared<MoeRank>();
    a->rank = rank;
    a->tables = tables;
    a->slots = std::move(slots);
    a->fault = fault;
    const GmAllocation& l = *mem.local[static_cast<std::size_t>(rank)];
    const int K = s.k, N = s.n, H = s.half_n(), E = s.experts, P = s.packed_row_bytes(), R = s.routes();
    const int rows = std::max(1, tables->max_recv);
    if (t.a.rows() != s.m || t.a.cols() != K || t.a.dtype() != s.x_dtype)
        throw std::invalid_argument(fmt::format("{} rank {}: x (A) is {} x {} {}, the op needs {} x {} {}", op, rank, t.a.rows(),
                                                t.a.cols(), dtype_name(t.a.dtype()), s.m, K, dtype_name(s.x_dtype)));
    a->x = t.a;  // the caller's tokens, M x K in s.x_dtype (the sharding's A)
    a->keys = GmTensor(l, lay.keys, 1, R, R, DType::F32);
    a->probs = GmTensor(l, lay.probs, s.m, s.topk, s.topk, DType::F32);
    a->sorted = GmTensor(l, lay.sorted, 2, R, R, DType::F32);
    a->row_of_route = GmTensor(l, lay.row_of_route, 1, R, R, DType::I32);
    a->token_counts = GmTensor(l, lay.token_counts, 1, lay.token_count_cols(), lay.token_count_cols(), DType::F32);
    if (lay.ffn) {
        for (int e = 0; e < E; ++e) {
            a->w1.emplace_back(l, lay.w1 + std::int64_t{e} * K * N, K, N, N, DType::I8);
            a->w2.emplace_back(l, lay.w2 + std::int64_t{e} * H * K, H, K, K, DType::I8);
        }
        a->scale1 = GmTensor(l, lay.scale1, E, N, N, DType::F32);
        a->scale2 = GmTensor(l, lay.scale2, E, K, K, DType::F32);
        a->gmm1_out = GmTensor(l, lay.gmm1_out, rows, N, N, DType::F16);
        a->swiglu_q = GmTensor(l, lay.swiglu_q, rows, H, H, DType::I8);
    }
    a->recv = GmTensor(l, lay.recv, rows, P, P, DType::I8);
    a->recv_scale = GmTensor(l, lay.recv, rows, P / 4, P / 4, DType::F32);
    a->swiglu_s = GmTensor(l, lay.swiglu_s, rows, 8, 8, DType::F32);
    a->gmm2_out = GmTensor(l, lay.gmm2_out, rows, K, K, DType::F16);
    a->out = t.out;
    for (int r = 0; r < s.ranks; ++r) {
        const GmAllocation& w = *mem.window[static_cast<std::size_t>(r)];
        a->packed.emplace_back(w, lay.packed, R, P, P, DType::I8);
        a->combined.emplace_back(w, lay.combined, R, K, K, DType::F16);
        a->count_rows.emplace_back(w, lay.count_rows, s.ranks, 256, 256, DType::I32);
        if (lay.has_inbox) a->inbox.emplace_back(w, lay.inbox, rows, P, P, DType::I8);
    }
    a->window_bases = mem.window_bases;
    a->slots_offset = lay.counters;
    a->after_reorder = DeviceBarrier{lay.barrier1, rank, mem.window_bases};
    a->after_combine = DeviceBarrier{lay.barrier2, rank, mem.window_bases};
    return a;
}

void fill_moe_inputs(const RouteTables& t, const MoeLayout& lay, int rank, const GmAllocation& l) {
    const MoeShape& s = t.shape;
    std::byte* d = const_cast<std::byte*>(l.data.data());  // the host places the inputs before any kernel runs
    const int K = s.k, N = s.n, H = s.half_n(), E = s.experts;
    auto* keys = reinterpret_cast<float*>(d + lay.keys);
    auto* probs = reinterpret_cast<float*>(d + lay.probs);
    const std::vector<std::int32_t>& ex = t.expert[static_cast<std::size_t>(rank)];
    for (int i = 0; i < s.routes(); ++i) {
        keys[i] = -static_cast<float>(ex[static_cast<std::size_t>(i)]);
        probs[i] = prob_value(s, rank, i / s.topk, i % s.topk);
    }
    if (!lay.ffn) return;
    auto* w1 = reinterpret_cast<std::int8_t*>(d + lay.w1);
    auto* w2 = reinterpret_cast<std::int8_t*>(d + lay.w2);
    auto* s1 = reinterpret_cast<float*>(d + lay.scale1);
    auto* s2 = reinterpret_cast<float*>(d + lay.scale2);
    for (int e = 0; e < E; ++e) {
        const int g = rank * E + e;
        for (int kk = 0; kk < K; ++kk) w1_row(s, g, kk, w1 + (std::int64_t{e} * K + kk) * N);
        for (int j = 0; j < H; ++j) w2_row(s, g, j, w2 + (std::int64_t{e} * H + j) * K);
        for (int nn = 0; nn < N; ++nn) s1[std::int64_t{e} * N + nn] = scale1_value(s, g, nn);
        for (int c = 0; c < K; ++c) s2[std::int64_t{e} * K + c] = scale2_value(s, g, c);
    }
}

}  // namespace tandem::kernels::moe
