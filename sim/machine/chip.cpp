#include "sim/machine/chip.hpp"

namespace tandem {

Chip::Chip(int rank_, const Profile& profile, bool functional)
    : rank(rank_), gm(rank_, profile.chip.gm_bytes, functional) {
    aic.resize(static_cast<std::size_t>(profile.chip.aic_cores));
    aiv.resize(static_cast<std::size_t>(profile.chip.aiv_cores));
    for (int i = 0; i < profile.chip.aic_cores; ++i) {
        aic[static_cast<std::size_t>(i)].type = CoreType::AIC;
        aic[static_cast<std::size_t>(i)].index = i;
    }
    for (int i = 0; i < profile.chip.aiv_cores; ++i) {
        aiv[static_cast<std::size_t>(i)].type = CoreType::AIV;
        aiv[static_cast<std::size_t>(i)].index = i;
    }
}

}  // namespace tandem
