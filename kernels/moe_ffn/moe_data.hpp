#pragma once
// moe_ffn's data and routing (README.md in this folder): the routes of every rank's tokens, the
// tables the kernels address rows with, the deterministic inputs (x, probs, int8 weights and
// fixpipe scales) and the C++ golden of the op's math. Nothing here depends on the simulator's
// data mode: the routing tables are what the host computes for the kernels in both modes
// (timing-only runs have no data, but the same row counts and addresses).
#include <cstdint>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels::moe {

// Routers (the knob `routing`).
enum class Routing : int { RoundRobin = 0, Uniform = 1, Zipf = 2 };

struct MoeShape {
    int ranks = 2;   // EP world W
    int m = 0;       // tokens per rank
    int k = 0;       // hidden size K
    int n = 0;       // GMM1's output width N (SwiGLU halves it: GMM2's K_red = N/2)
    int topk = 8;
    int experts = 16;  // local experts per rank E
    Routing routing = Routing::RoundRobin;
    int zipf_s_pct = 120;  // zipf exponent S x 100
    int seed = 0;
    DType x_dtype = DType::BF16;  // x is bf16 (published) or fp16
    // Rows a rank's receive buffers hold (the published maxOutputSize, 81940 in its cases): a
    // routing that sends a rank more is refused, as the published kernel has no room for them.
    int max_output_size = kPublishedMaxOutputSize;
    static constexpr int kPublishedMaxOutputSize = 81940;

    int global_experts() const { return ranks * experts; }
    int routes() const { return m * topk; }  // R, per rank
    int half_n() const { return n / 2; }
    int packed_row_bytes() const { return k + 32; }  // K int8 + fp32 s1 replicated 8x
};

MoeShape moe_shape_of(const OpParams& p);

// The published generator's round-robin, and the seeded routers: the global expert of rank r's
// token t, route k.
std::vector<std::int32_t> route_experts(const MoeShape& s, int rank);

// Every table the kernels need, for every rank.
struct RouteTables {
    MoeShape shape;
    // [rank][route]: global expert of the route, and its row in the rank's expert-sorted order
    // (offsetA and offsetD rows; the published expandedRowIdx).
    std::vector<std::vector<std::int32_t>> expert;
    std::vector<std::vector<std::int32_t>> sorted_row;
    // [rank][sorted row]: the route at that row (the published srcRoute, sorted_row's inverse).
    std::vector<std::vector<std::int32_t>> source_route;
    // [rank][global expert]: routes of the rank to that expert, and the first sorted row of them
    // (preSumBeforeRank in the published kernel).
    std::vector<std::vector<std::int32_t>> count;
    std::vector<std::vector<std::int32_t>> first_row;
    // [rank][local expert]: rows the rank receives for its expert, and where they start in its
    // received buffer (expert-major, sources in rank order inside an expert).
    std::vector<std::vector<std::int32_t>> recv_rows;
    std::vector<std::vector<std::int32_t>> recv_base;
    std::vector<std::int32_t> recv_total;  // [rank]
    int max_recv = 0;                      // over ranks

    // Where rows from `src` for destination `dst`'s local expert `e` start in dst's buffer.
    int recv_row(int dst, int e, int src) const;
    int global_expert(int dst, int e) const { return dst * shape.experts + e; }
    // What the all-to-all moves into `rank` (its collective's payload): the rows its experts
    // receive from its peers (dispatch), and the rows its routes get back from its peers'
    // experts (combine).
    double rows_from_peers(int rank) const;
    double rows_back_from_peers(int rank) const;
};

RouteTables make_route_tables(const MoeShape& s);

// Deterministic inputs besides the tokens x (the caller's A; values do not affect timing).
float prob_value(const MoeShape& s, int rank, int t, int k);          // normalised over k
void w1_row(const MoeShape& s, int g, int kk, std::int8_t* out);      // global expert g's W1 row kk: N values
void w2_row(const MoeShape& s, int g, int j, std::int8_t* out);       // W2 row j: K values
float scale1_value(const MoeShape& s, int g, int nn);
float scale2_value(const MoeShape& s, int g, int cc);

// The op's math on rank `rank`'s tokens x (M x K), with the kernels' rounding points (fp16 gmC,
// fp16 GMM2 output, fp16 combined rows, fp32 weighted sum, fp16 out): M x K fp32 values of fp16
// numbers.
std::vector<float> golden_rank(const MoeShape& s, int rank, const OwnMathInput& x);

// Per-row dynamic int8 quantisation as the kernels do it: s = max|v| / 127, q = rint(v * 127/max),
// saturated (a zero row: s = 0, q = 0). Returns s.
float quantize_row(const float* v, int n, std::int8_t* q);
// silu(g) * u, step by step as the vector unit computes it in fp32.
float swiglu(float g, float u);

}  // namespace tandem::kernels::moe
