#pragma once
// moe_combine (the MoE all-to-all's way back, alone: the experts' output rows pushed to the
// ranks their tokens came from and summed there with the gate weights) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& moe_combine_op();

}  // namespace tandem::kernels
