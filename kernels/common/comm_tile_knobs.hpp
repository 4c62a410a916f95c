#pragma once
// The comm tile of the ops that push each finished GEMM tile to the peers from the vector cores
// (matmul_all_gather, matmul_all_scatter): the unit a tile moves through UB in (Iris's
// COMMUNICATION_TILE_M x COMMUNICATION_TILE_N), its two knobs, their defaults and their checks,
// written once so that both ops offer and refuse the same values with the same words.
#include <map>
#include <string>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// The knobs comm_tile_m and comm_tile_n; `mover` names what moves the tiles ("push", "scatter").
std::vector<KnobDesc> comm_tile_knobs(const std::string& mover);

// The comm tile as run: the knobs when given, else base-n columns and the largest divisor of
// base-m whose tile is <= 32 KiB (collectives::comm_tile_rows).
int comm_tile_m(const OpParams& p);
int comm_tile_n(const OpParams& p);
// Both, as VariantDesc::effective_knobs reports them.
std::map<std::string, int> comm_tile_effective_knobs(const OpParams& p);

// The comm tile divides the GEMM tile and its UbStage (two sets of two comm tiles of the output
// dtype) fits in UB. `ub_note` follows "four AxB <dtype> comm tiles" in the UB message.
void check_comm_tile(const OpParams& p, const BufferLimits& lim, const std::string& ub_note);

}  // namespace tandem::kernels
