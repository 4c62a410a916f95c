#include "kernels/all_gather_matmul/agm_layout.hpp"

#include <fmt/format.h>

namespace tandem::kernels {

std::string AgmWindow::name_of(std::int64_t offset) const {
    if (offset == arrivals_offset) return "arrivals";
    if (offset > arrivals_offset && offset < total_bytes && (offset - arrivals_offset) % 4 == 0)
        return fmt::format("arrivals[step={}]", (offset - arrivals_offset) / 4);
    if (offset < flags_offset || offset >= arrivals_offset || (offset - flags_offset) % 4 != 0) return {};
    const std::int64_t idx = (offset - flags_offset) / 4;
    const std::int64_t group = idx % shape.k_groups();
    const std::int64_t mt = idx / shape.k_groups() % shape.m_tiles();
    const std::int64_t src = idx / shape.k_groups() / shape.m_tiles();
    return fmt::format("flag[src={},mt={},g={}]", src, mt, group);
}

}  // namespace tandem::kernels
