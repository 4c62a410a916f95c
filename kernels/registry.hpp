#pragma once
// The table of ops: the one place an op is registered (kernels/registry.cpp). Everything the
// host offers per op (--op, --list-ops, sweep columns, validation messages, the API) reads it.
#include <string>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// Every registered op, in the order --list-ops shows them (immutable); the first is the one a
// run without --op runs (the seed's AllGather+GEMM).
const std::vector<const OpDesc*>& registered_ops();

// The op called `name`; throws SimError listing the ops when there is none.
const OpDesc& find_op(const std::string& name);

// Every knob any variant of any op declares, once per name, in registration order (the
// command line offers one flag per knob, the sweep one column).
std::vector<KnobDesc> all_knobs();

}  // namespace tandem::kernels
