#pragma once
// The last costs one block asked the cost model for, kept with their arguments. A block's K loop
// issues the same TMATMUL and TEXTRACT shapes hundreds of times in a row, and each of those costs
// is a chain of divisions and a rounding (CostModel::cube_ps, transfer_ps). cube_ps alone was 7%
// of the host time of a 64-rank timing-only AllGather+GEMM (perf); with the memo that run takes
// about 4% less (docs/PERFORMANCE.md). Looked up, the same picoseconds cost a few compares. One
// per block, and a block runs on one host thread at a time: no lock.
#include <array>
#include <cstdint>

#include "sim/mem/dtype.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct CostModel;

class CostMemo {
public:
    // cost.cube_ps(m, k, n, operands).
    SimTime cube_ps(const CostModel& cost, int m, int k, int n, DType operands) {
        Cube& c = cube_;
        if (c.model != &cost || c.m != m || c.k != k || c.n != n || c.operands != operands) {
            c = Cube{&cost, m, k, n, operands, compute_cube_ps(cost, m, k, n, operands)};
        }
        return c.ps;
    }

    // cost.transfer_ps(bytes, bytes_per_s). Two entries: a K loop alternates its moves into L0A
    // and L0B, which differ in size or rate.
    SimTime transfer_ps(const CostModel& cost, std::int64_t bytes, std::int64_t bytes_per_s) {
        for (const Transfer& t : transfers_) {
            if (t.model == &cost && t.bytes == bytes && t.bytes_per_s == bytes_per_s) return t.ps;
        }
        Transfer& t = transfers_[next_transfer_];
        next_transfer_ ^= 1U;
        t = Transfer{&cost, bytes, bytes_per_s, compute_transfer_ps(cost, bytes, bytes_per_s)};
        return t.ps;
    }

private:
    // The cost model's answers on a miss (out of line: this header is in every block's).
    static SimTime compute_cube_ps(const CostModel& cost, int m, int k, int n, DType operands);
    static SimTime compute_transfer_ps(const CostModel& cost, std::int64_t bytes, std::int64_t bytes_per_s);

    struct Cube {
        const CostModel* model = nullptr;  // none yet
        int m = 0;
        int k = 0;
        int n = 0;
        DType operands = DType::F16;
        SimTime ps = 0;
    };
    struct Transfer {
        const CostModel* model = nullptr;  // none yet
        std::int64_t bytes = 0;
        std::int64_t bytes_per_s = 0;
        SimTime ps = 0;
    };
    Cube cube_;
    std::array<Transfer, 2> transfers_{};
    unsigned next_transfer_ = 0;  // the entry the next miss replaces (the older one)
};

}  // namespace tandem
