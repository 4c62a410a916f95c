#pragma once
// The table of ops: the one place an op is registered (kernels/registry.cpp). Everything the
// host offers per op (--op, --list-ops, sweep columns, validation messages, the API) reads it.
#include <string>
#include <vector>

#include "kernels/op_desc.hpp"

namespace tandem::kernels {

// A table of ops (immutable once made): the shipped one below, or one a test makes with an op
// of its own (tests/kernels/toy_op_test.cpp), looked up the same way.
class OpRegistry {
public:
    // Throws SimError naming the op when two ops share a name or an op has no variant.
    explicit OpRegistry(std::vector<const OpDesc*> ops);

    // In the order --list-ops shows them.
    const std::vector<const OpDesc*>& ops() const { return ops_; }
    // The op called `name`; throws ParamError (naming `op`) listing the ops when there is none.
    const OpDesc& find(const std::string& name) const;
    // Every knob any variant of any op declares, once per name, in registration order (the
    // command line offers one flag per knob, the sweep one column).
    std::vector<KnobDesc> knobs() const;

private:
    std::vector<const OpDesc*> ops_;
};

// The shipped ops (kernels/registry.cpp).
const OpRegistry& shipped_registry();

// The shipped registry's ops, lookup and knobs (what the host and the API use); the first op is
// the one a run without --op runs (the seed's AllGather+GEMM).
const std::vector<const OpDesc*>& registered_ops();
const OpDesc& find_op(const std::string& name);
std::vector<KnobDesc> all_knobs();

}  // namespace tandem::kernels
