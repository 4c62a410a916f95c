#pragma once
// What all_gather_matmul's variants share (agm_run.cpp): one OpInstance (the variant picks its
// kernels), the checks, the workspace and the staged variant's knobs as run.
#include <memory>

#include "kernels/op_desc.hpp"

namespace tandem::kernels::agm {

void validate(const OpParams& c, const BufferLimits& lim);
double workspace_bytes(const OpParams& p);
std::unique_ptr<OpInstance> make_run(const OpParams& p);

// staged's K tiles per flag (k_per_flag; default min(4, K/n/base-n)) and UB stages (default 2).
int k_per_flag_of(const OpParams& p);
int stages_of(const OpParams& p);

}  // namespace tandem::kernels::agm
