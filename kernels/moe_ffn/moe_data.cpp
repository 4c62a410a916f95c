#include "kernels/moe_ffn/moe_data.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem::kernels::moe {

namespace {

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// A uniform double in [0, 1) from the stream (seed, rank, token, draw).
double uniform01(std::uint64_t seed, int rank, int t, int draw) {
    const std::uint64_t z = splitmix(splitmix(splitmix(seed ^ 0x4D6F45ULL) + static_cast<std::uint64_t>(rank)) +
                                     (static_cast<std::uint64_t>(t) << 16) + static_cast<std::uint64_t>(draw));
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

float round_half(float v) { return half_to_float(float_to_half(v)); }

}  // namespace

MoeShape moe_shape_of(const OpParams& p) {
    MoeShape s;
    s.ranks = p.ranks;
    s.m = p.m;
    s.k = p.k;
    s.n = p.n;
    s.topk = p.knob("topk").value_or(8);
    s.experts = p.knob("experts_per_rank").value_or(16);
    s.routing = static_cast<Routing>(p.knob("routing").value_or(0));
    s.zipf_s_pct = p.knob("zipf_s_pct").value_or(120);
    s.seed = p.knob("route_seed").value_or(0);
    s.max_output_size = p.knob("max_output_size").value_or(MoeShape::kPublishedMaxOutputSize);
    s.x_dtype = p.dtype == DType::F16 ? DType::F16 : DType::BF16;
    return s;
}

std::vector<std::int32_t> route_experts(const MoeShape& s, int rank) {
    const int ge = s.global_experts();
    std::vector<std::int32_t> e(static_cast<std::size_t>(s.routes()));
    if (s.routing == Routing::RoundRobin) {
        // expert(r, t, k) = ((r*M + t)*topK + k) mod (W*E): the published gen_data.py's.
        for (int t = 0; t < s.m; ++t)
            for (int k = 0; k < s.topk; ++k)
                e[static_cast<std::size_t>(t * s.topk + k)] =
                    static_cast<std::int32_t>(((static_cast<std::int64_t>(rank) * s.m + t) * s.topk + k) % ge);
        return e;
    }
    // Seeded: topK distinct experts per token, uniform or with Zipf popularity p(g) ~ 1/(g+1)^S.
    std::vector<double> cdf(static_cast<std::size_t>(ge));
    double acc = 0;
    for (int g = 0; g < ge; ++g) {
        acc += s.routing == Routing::Zipf ? 1.0 / std::pow(static_cast<double>(g + 1), s.zipf_s_pct / 100.0) : 1.0;
        cdf[static_cast<std::size_t>(g)] = acc;
    }
    for (double& c : cdf) c /= acc;
    std::vector<char> taken(static_cast<std::size_t>(ge));
    for (int t = 0; t < s.m; ++t) {
        std::fill(taken.begin(), taken.end(), 0);
        int draw = 0;
        for (int k = 0; k < s.topk; ++k) {
            int g = -1;
            // Rejection of experts the token already has; after many misses, the first free one.
            for (int tries = 0; tries < 64 && g < 0; ++tries) {
                const double u = uniform01(static_cast<std::uint64_t>(s.seed), rank, t, draw++);
                int cand = static_cast<int>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
                cand = std::min(cand, ge - 1);
                if (!taken[static_cast<std::size_t>(cand)]) g = cand;
            }
            if (g < 0) g = static_cast<int>(std::find(taken.begin(), taken.end(), 0) - taken.begin());
            taken[static_cast<std::size_t>(g)] = 1;
            e[static_cast<std::size_t>(t * s.topk + k)] = g;
        }
    }
    return e;
}

int RouteTables::recv_row(int dst, int e, int src) const {
    int row = recv_base[static_cast<std::size_t>(dst)][static_cast<std::size_t>(e)];
    const int g = global_expert(dst, e);
    for (int s2 = 0; s2 < src; ++s2) row += count[static_cast<std::size_t>(s2)][static_cast<std::size_t>(g)];
    return row;
}

double RouteTables::rows_from_peers(int rank) const {
    double rows = 0;
    for (int src = 0; src < shape.ranks; ++src) {
        if (src == rank) continue;
        for (int e = 0; e < shape.experts; ++e)
            rows += count[static_cast<std::size_t>(src)][static_cast<std::size_t>(global_expert(rank, e))];
    }
    return rows;
}

double RouteTables::rows_back_from_peers(int rank) const {
    double rows = 0;
    for (int g = 0; g < shape.global_experts(); ++g)
        if (g / shape.experts != rank) rows += count[static_cast<std::size_t>(rank)][static_cast<std::size_t>(g)];
    return rows;
}

RouteTables make_route_tables(const MoeShape& s) {
    RouteTables t;
    t.shape = s;
    const int w = s.ranks;
    const int ge = s.global_experts();
    for (int r = 0; r < w; ++r) {
        std::vector<std::int32_t> ex = route_experts(s, r);
        std::vector<std::int32_t> cnt(static_cast<std::size_t>(ge), 0);
        for (std::int32_t g : ex) ++cnt[static_cast<std::size_t>(g)];
        std::vector<std::int32_t> first(static_cast<std::size_t>(ge), 0);
        std::exclusive_scan(cnt.begin(), cnt.end(), first.begin(), 0);
        // Stable sort by expert: the route's row is its expert's first row plus the routes of
        // that expert before it.
        std::vector<std::int32_t> next = first;
        std::vector<std::int32_t> row(ex.size());
        for (std::size_t i = 0; i < ex.size(); ++i) row[i] = next[static_cast<std::size_t>(ex[i])]++;
        std::vector<std::int32_t> route(ex.size());
        for (std::size_t i = 0; i < ex.size(); ++i) route[static_cast<std::size_t>(row[i])] = static_cast<std::int32_t>(i);
        t.expert.push_back(std::move(ex));
        t.sorted_row.push_back(std::move(row));
        t.source_route.push_back(std::move(route));
        t.count.push_back(std::move(cnt));
        t.first_row.push_back(std::move(first));
    }
    for (int d = 0; d < w; ++d) {
        std::vector<std::int32_t> rows(static_cast<std::size_t>(s.experts), 0), base(static_cast<std::size_t>(s.experts), 0);
        int total = 0;
        for (int e = 0; e < s.experts; ++e) {
            base[static_cast<std::size_t>(e)] = total;
            for (int src = 0; src < w; ++src) rows[static_cast<std::size_t>(e)] += t.count[static_cast<std::size_t>(src)][static_cast<std::size_t>(d * s.experts + e)];
            total += rows[static_cast<std::size_t>(e)];
        }
        t.recv_rows.push_back(std::move(rows));
        t.recv_base.push_back(std::move(base));
        t.recv_total.push_back(total);
        t.max_recv = std::max(t.max_recv, total);
    }
    return t;
}

float prob_value(const MoeShape& s, int rank, int t, int k) {
    // probs[t,k] ~ (topK - k) + 0.05*(t mod topK) + 0.01*r, normalised per row (gen_data.py's).
    auto raw = [&](int kk) { return static_cast<float>((s.topk - kk) + 0.05 * (t % s.topk) + 0.01 * rank); };
    float sum = 0;
    for (int kk = 0; kk < s.topk; ++kk) sum += raw(kk);
    return raw(k) / sum;
}

// The weights are hashed rather than periodic: a periodic pattern against a smooth x cancels to
// nearly zero, too small for the tolerance to see a wrong route. Ranges as gen_data.py's.
namespace {
// One row of a hashed int8 matrix: one splitmix per 8 columns, a byte each, mod `span`, minus
// `span / 2`. A row at a time because the weights are most of what a functional run generates.
void hashed_row(std::uint64_t salt, int g, int row, int cols, int span, std::int8_t* out) {
    const std::uint64_t seed = splitmix((static_cast<std::uint64_t>(g) << 40) ^ (static_cast<std::uint64_t>(row) << 20) ^ salt);
    for (int c0 = 0; c0 < cols; c0 += 8) {
        std::uint64_t z = splitmix(seed + static_cast<std::uint64_t>(c0));
        for (int c = c0; c < std::min(cols, c0 + 8); ++c, z >>= 8)
            out[c] = static_cast<std::int8_t>(static_cast<int>((z & 0xFF) % static_cast<std::uint64_t>(span)) - span / 2);
    }
}
}  // namespace

void w1_row(const MoeShape& s, int g, int kk, std::int8_t* out) { hashed_row(0x5731ULL, g, kk, s.n, 7, out); }     // -3..3
void w2_row(const MoeShape& s, int g, int j, std::int8_t* out) { hashed_row(0x9AB2ULL, g, j, s.k, 9, out); }      // -4..4

// gen_data.py's scales: (1/16)(1 + ((i + off) mod 5)/8).
float scale1_value(const MoeShape&, int g, int nn) { return (1.0f / 16.0f) * (1.0f + static_cast<float>((nn + g) % 5) / 8.0f); }
float scale2_value(const MoeShape&, int g, int cc) { return (1.0f / 16.0f) * (1.0f + static_cast<float>((cc + 2 * g) % 5) / 8.0f); }

float quantize_row(const float* v, int n, std::int8_t* q) {
    float mx = 0;
    for (int i = 0; i < n; ++i) mx = std::max(mx, std::fabs(v[i]));
    const float inv = mx > 0 ? 127.0f / mx : 0.0f;
    for (int i = 0; i < n; ++i) {
        const float r = std::nearbyint(v[i] * inv);
        q[i] = static_cast<std::int8_t>(std::clamp(r, -128.0f, 127.0f));
    }
    return mx / 127.0f;
}

float swiglu(float g, float u) {
    const float t = g * -1.0f;
    const float e = std::exp(t);
    const float d = e + 1.0f;
    const float sl = g / d;
    return sl * u;
}

std::vector<float> golden_rank(const MoeShape& s, int rank, const OwnMathInput& x) {
    const int K = s.k, N = s.n, H = s.half_n();
    const std::vector<std::int32_t> ex = route_experts(s, rank);
    std::vector<float> out(static_cast<std::size_t>(s.m) * K, 0.0f);
    std::vector<float> xf(static_cast<std::size_t>(K));
    std::vector<std::int8_t> q(static_cast<std::size_t>(K));
    std::vector<std::int32_t> acc1(static_cast<std::size_t>(N));
    std::vector<float> h(static_cast<std::size_t>(N)), y(static_cast<std::size_t>(H));
    std::vector<std::int8_t> q2(static_cast<std::size_t>(H));
    std::vector<std::int32_t> acc2(static_cast<std::size_t>(K));
    std::vector<float> sum(static_cast<std::size_t>(K));
    // Each expert's weights and scales, made once when first routed to.
    std::vector<std::vector<std::int8_t>> w1(static_cast<std::size_t>(s.global_experts())), w2(w1.size());
    std::vector<std::vector<float>> sc1(w1.size()), sc2(w1.size());
    auto weights_of = [&](int g) {
        const std::size_t gi = static_cast<std::size_t>(g);
        if (!w1[gi].empty()) return;
        w1[gi].resize(static_cast<std::size_t>(K) * N);
        for (int kk = 0; kk < K; ++kk) w1_row(s, g, kk, w1[gi].data() + static_cast<std::size_t>(kk) * N);
        w2[gi].resize(static_cast<std::size_t>(H) * K);
        for (int j = 0; j < H; ++j) w2_row(s, g, j, w2[gi].data() + static_cast<std::size_t>(j) * K);
        for (int nn = 0; nn < N; ++nn) sc1[gi].push_back(scale1_value(s, g, nn));
        for (int c = 0; c < K; ++c) sc2[gi].push_back(scale2_value(s, g, c));
    };
    for (int t = 0; t < s.m; ++t) {
        for (int c = 0; c < K; ++c) xf[static_cast<std::size_t>(c)] = x.at(t, c);
        const float s1 = quantize_row(xf.data(), K, q.data());
        for (int k = 0; k < s.topk; ++k) {
            const int g = ex[static_cast<std::size_t>(t * s.topk + k)];
            weights_of(g);
            const std::int8_t* W1 = w1[static_cast<std::size_t>(g)].data();
            const std::int8_t* W2 = w2[static_cast<std::size_t>(g)].data();
            const float* S1 = sc1[static_cast<std::size_t>(g)].data();
            const float* S2 = sc2[static_cast<std::size_t>(g)].data();
            // GMM1: exact integer sums (int32 as the cube's L0C: |sum| <= K x 127 x 4 fits), fixpipe
            // scale, fp16.
            std::fill(acc1.begin(), acc1.end(), 0);
            for (int kk = 0; kk < K; ++kk) {
                const std::int32_t a = q[static_cast<std::size_t>(kk)];
                if (a == 0) continue;
                for (int nn = 0; nn < N; ++nn) acc1[static_cast<std::size_t>(nn)] += a * W1[static_cast<std::size_t>(kk) * N + nn];
            }
            for (int nn = 0; nn < N; ++nn) {
                const float c16 = round_half(static_cast<float>(acc1[static_cast<std::size_t>(nn)]) * S1[nn]);
                h[static_cast<std::size_t>(nn)] = c16 * s1;
            }
            for (int j = 0; j < H; ++j) y[static_cast<std::size_t>(j)] = swiglu(h[static_cast<std::size_t>(j)], h[static_cast<std::size_t>(H + j)]);
            const float s2 = quantize_row(y.data(), H, q2.data());
            // GMM2, fixpipe scale, fp16; combine: x s2, fp16.
            std::fill(acc2.begin(), acc2.end(), 0);
            for (int j = 0; j < H; ++j) {
                const std::int32_t a = q2[static_cast<std::size_t>(j)];
                if (a == 0) continue;
                for (int c = 0; c < K; ++c) acc2[static_cast<std::size_t>(c)] += a * W2[static_cast<std::size_t>(j) * K + c];
            }
            const float p = prob_value(s, rank, t, k);
            for (int c = 0; c < K; ++c) {
                const float o16 = round_half(static_cast<float>(acc2[static_cast<std::size_t>(c)]) * S2[c]);
                const float comb = round_half(o16 * s2);
                const float v = comb * p;
                sum[static_cast<std::size_t>(c)] = k == 0 ? v : sum[static_cast<std::size_t>(c)] + v;
            }
        }
        for (int c = 0; c < K; ++c) out[static_cast<std::size_t>(t) * K + c] = round_half(sum[static_cast<std::size_t>(c)]);
    }
    return out;
}

}  // namespace tandem::kernels::moe
