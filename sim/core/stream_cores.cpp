#include "sim/core/stream_cores.hpp"

namespace tandem {

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
