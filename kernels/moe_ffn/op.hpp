#pragma once
// moe_ffn (expert-parallel MoE FFN: dispatch, int8 grouped FFN, combine; README.md in this
// folder) as the shared host sees it.
#include "kernels/op_desc.hpp"

namespace tandem::kernels {

const OpDesc& moe_ffn_op();

}  // namespace tandem::kernels
