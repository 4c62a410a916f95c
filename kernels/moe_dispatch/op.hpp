#pragma once
// moe_dispatch (the MoE all-to-all's way out, alone: every rank's tokens quantised to int8 and
// pulled by the ranks holding their experts) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& moe_dispatch_op();

}  // namespace tandem::kernels
