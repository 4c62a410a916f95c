#pragma once
// The work split of pto-isa's gemm_performance kernel (kernels/gemm/README.md), as pure
// arithmetic shared by the kernel, its validation and the tests. Every value here is a
// compile-time constant of the published kernel (its 6144^3 build); the other sizes keep the same
// 4 x 6 grid of C blocks and the same base tile, so singleCoreM = m / 4 and singleCoreN = n / 6:
//   * 24 blocks, block b owns C block (m-index b % 4, n-index b / 4): the m index varies fastest;
//   * a block's C block is mLoop x nLoop tiles of baseM x baseN = 128 x 256, walked i (rows)
//     outer, j (columns) inner; K is not split: kLoop = k / baseK steps of 64;
//   * every stepK = 4 K steps one A panel (128 x 256) and one B panel (256 x 256) are loaded to L1.
#include <cstdint>

namespace tandem::kernels::gemm {

struct PerfTiling {
    static constexpr int kGridM = 4;   // C blocks along M (mIter)
    static constexpr int kGridN = 6;   // C blocks along N
    static constexpr int kBlocks = kGridM * kGridN;  // blockDim of the launch: 24
    static constexpr int kBaseM = 128;
    static constexpr int kBaseN = 256;
    static constexpr int kBaseK = 64;
    static constexpr int kStepK = 4;   // stepKa = stepKb: K steps per L1 panel
    static constexpr int kPanelK = kBaseK * kStepK;  // 256

    PerfTiling(int m, int k, int n) : m(m), k(k), n(n) {}

    int m;
    int k;
    int n;

    int single_core_m() const { return m / kGridM; }
    int single_core_n() const { return n / kGridN; }
    int single_core_k() const { return k; }  // K is not split
    int m_loop() const { return single_core_m() / kBaseM; }
    int n_loop() const { return single_core_n() / kBaseN; }
    int k_loop() const { return k / kBaseK; }
    // InitGMOffsets: mIter = m / singleCoreM; m index = block % mIter, n index = block / mIter.
    int m_index(int block) const { return block % kGridM; }
    int n_index(int block) const { return block / kGridM; }

    // Per block: what it computes and issues (the counts tests and the README check).
    int tiles_per_block() const { return m_loop() * n_loop(); }
    std::int64_t matmuls_per_block() const { return std::int64_t{tiles_per_block()} * k_loop(); }
    std::int64_t panels_per_block() const { return matmuls_per_block() / kStepK; }  // A + B TLOAD pairs
};

}  // namespace tandem::kernels::gemm
