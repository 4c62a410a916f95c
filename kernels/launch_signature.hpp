#pragma once
// What every rank's launch of an op's kernel must agree on (KernelLaunch::signature, compared
// across ranks under --sanitize): the op's shape and dtypes, and the launch's block count.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// Fills the signature of every launch of `plan` (built for `params`).
void sign_launches(ViewPlan& plan, const OpParams& params);

}  // namespace tandem::kernels
