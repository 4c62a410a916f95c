#pragma once
// moe_ffn's knobs (topk, experts per rank, the router, the receive buffers' rows) and their
// checks: shared by moe_ffn and the ops that run its stages alone (moe_dispatch, moe_combine).
#include <map>
#include <string>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels::moe {

// The knobs' descriptions (flags, sweep columns, JSON keys).
std::vector<KnobDesc> moe_knob_descs();
// The knobs, as given or defaulted (the published cases' topK 8, 16 experts per rank).
std::map<std::string, int> moe_knobs(const OpParams& p);
// The knobs' ranges, and that no rank is routed more rows than its receive buffers hold
// (kernels::ParamError naming the knob).
void check_moe_routing(const OpParams& p);

}  // namespace tandem::kernels::moe
