#include "sim/core/cost_memo.hpp"

#include "sim/core/cost_model.hpp"

namespace tandem {

SimTime CostMemo::compute_cube_ps(const CostModel& cost, int m, int k, int n, DType operands) {
    return cost.cube_ps(m, k, n, operands);
}

SimTime CostMemo::compute_transfer_ps(const CostModel& cost, std::int64_t bytes, std::int64_t bytes_per_s) {
    return cost.transfer_ps(bytes, bytes_per_s);
}

}  // namespace tandem
