#include "sim/machine/chip.hpp"

namespace tandem {

Chip::Chip(int rank_, const Profile& profile, bool functional) : rank(rank_), gm(rank_, profile.chip.gm_bytes, functional) {}

}  // namespace tandem
