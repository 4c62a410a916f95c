#include "sim/machine/chip.hpp"

namespace tandem {

Chip::Chip(int rank_, const Profile& profile, bool functional) : rank(rank_), gm(rank_, profile.chip.gm_bytes, functional),
      memory(profile.chip.l2_bytes, profile.chip.l2_region_bytes) {}

}  // namespace tandem
