#include "sim/core/stream_cores.hpp"

#include <fmt/format.h>

#include "sim/sim_error.hpp"

namespace tandem {

namespace {
int checked_core_count(const char* type, int count) {
    if (count > kMaxCoresPerType) {
        throw SimError(fmt::format("chip: {} {} cores, at most {} per type (event records hold a core index in 16 bits)",
                                   count, type, kMaxCoresPerType));
    }
    return count;
}
}  // namespace

StreamCores::StreamCores(const ChipProfile& chip)
    : aic_count_(checked_core_count("AIC", chip.aic_cores)), aiv_count_(checked_core_count("AIV", chip.aiv_cores)) {}

std::vector<CoreState>& StreamCores::cores(CoreType t) {
    std::vector<CoreState>& v = t == CoreType::AIC ? aic_ : aiv_;
    if (v.empty()) {
        v.resize(static_cast<std::size_t>(count(t)));
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i].type = t;
            v[i].index = static_cast<int>(i);
        }
    }
    return v;
}

}  // namespace tandem
