#pragma once
// The hazard check shared by the instructions: an instruction starting at `start` reads tile
// `t` (and, `writes`, overwrites it). Reading before the write it depends on ends, or
// overwriting while an earlier read still runs, is a missing set_flag/wait_flag: a SimError
// naming both instructions, the tile and the times.
#include "sim/core/tile.hpp"
#include "sim/sim_time.hpp"

namespace tandem::isa_detail {

void check_hazard(const char* instr, const Tile& t, SimTime start, bool writes);

}  // namespace tandem::isa_detail
