#include "sim/mem/read_requests.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tandem {

std::int64_t ReadRequests::rate_bps(double miss_share) const {
    const double latency_ps = static_cast<double>(hit_ps) + std::clamp(miss_share, 0.0, 1.0) * static_cast<double>(miss_ps);
    if (latency_ps <= 0) return INT64_MAX;
    const double bps = static_cast<double>(bytes_in_flight) * 1.0e12 / latency_ps;
    if (bps >= 9.0e18) return INT64_MAX;  // no bound a transfer could reach
    return std::max<std::int64_t>(1, std::llround(bps));
}

}  // namespace tandem
