// The cost memo (sim/core/cost_memo.hpp) answers what the cost model answers, whatever the order
// the shapes come in: the same shape again, two alternating, a third pushing one out, another
// dtype, another cost model.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <tuple>

#include "sim/core/cost_memo.hpp"
#include "sim/core/cost_model.hpp"
#include "tests/support/test_support.hpp"

namespace tandem {
namespace cost_memo_test {

TEST(CostMemo, CubeCostsAreTheCostModelsInAnyOrder) {
    const Profile profile = test::b1_profile();
    const CostModel cost(profile);
    Profile faster = profile;
    faster.chip.core_clock_mhz *= 2;
    const CostModel fast_cost(faster);
    ASSERT_NE(cost.cube_ps(128, 64, 256), fast_cost.cube_ps(128, 64, 256));
    CostMemo memo;
    const std::array<std::tuple<int, int, int, DType>, 5> shapes{{{128, 64, 256, DType::F16},
                                                                  {128, 64, 256, DType::BF16},
                                                                  {128, 64, 256, DType::F32},
                                                                  {64, 64, 256, DType::F16},
                                                                  {17, 300, 5, DType::I8}}};
    // A deterministic walk that repeats a shape, alternates two and jumps between all five.
    std::uint32_t state = 12345;
    for (int i = 0; i < 2000; ++i) {
        state = state * 1664525U + 1013904223U;
        const auto& [m, k, n, dtype] = shapes[(state >> 16) % (i % 3 == 0 ? 5 : 2)];
        const CostModel& model = (state >> 8) % 7 == 0 ? fast_cost : cost;
        ASSERT_EQ(memo.cube_ps(model, m, k, n, dtype), model.cube_ps(m, k, n, dtype)) << "step " << i;
    }
}

TEST(CostMemo, TransferCostsAreTheCostModelsInAnyOrder) {
    const Profile profile = test::b1_profile();
    const CostModel cost(profile);
    const CostModel other(profile);  // equal numbers, another model: still answered right
    CostMemo memo;
    const std::array<std::pair<std::int64_t, std::int64_t>, 4> moves{
        {{32768, cost.l1_to_l0a_bps}, {32768, cost.l1_to_l0b_bps}, {16384, cost.l1_to_l0a_bps}, {1, 3}}};
    std::uint32_t state = 777;
    for (int i = 0; i < 2000; ++i) {
        state = state * 1664525U + 1013904223U;
        const auto& [bytes, rate] = moves[(state >> 16) % (i % 4 == 0 ? 4 : 2)];
        const CostModel& model = (state >> 8) % 5 == 0 ? other : cost;
        ASSERT_EQ(memo.transfer_ps(model, bytes, rate), model.transfer_ps(bytes, rate)) << "step " << i;
    }
}

}  // namespace cost_memo_test
}  // namespace tandem
