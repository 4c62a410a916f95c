// The registry of ops. Adding an op: write kernels/<op>/ (its kernels and its OpDesc), then
// add its description here, one line.
#include "kernels/registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/all_gather_matmul/op.hpp"
#include "kernels/allgather_gemm/op.hpp"
#include "kernels/gemm/op.hpp"
#include "kernels/matmul_all_gather/op.hpp"
#include "kernels/matmul_all_scatter/op.hpp"
#include "kernels/matmul_all_reduce/op.hpp"
#include "kernels/matmul_reduce_scatter/op.hpp"
#include "sim/sim_error.hpp"

namespace tandem::kernels {

const std::vector<const OpDesc*>& registered_ops() {
    static const std::vector<const OpDesc*> ops = {
        &allgather_gemm_op(),
        &matmul_all_scatter_op(),
        &all_gather_matmul_op(),
        &matmul_all_reduce_op(),
        &matmul_all_gather_op(),
        &matmul_reduce_scatter_op(),
        &gemm_op(),
    };
    return ops;
}

const OpDesc& find_op(const std::string& name) {
    std::vector<std::string> names;
    for (const OpDesc* op : registered_ops()) {
        if (op->name == name) return *op;
        names.push_back(op->name);
    }
    throw SimError(fmt::format("--op {}: no such op (ops: {}; --list-ops describes them)", name, fmt::join(names, ", ")));
}

std::vector<KnobDesc> all_knobs() {
    std::vector<KnobDesc> out;
    for (const OpDesc* op : registered_ops()) {
        for (const VariantDesc& v : op->variants) {
            for (const KnobDesc& k : v.knobs) {
                const bool seen = std::any_of(out.begin(), out.end(), [&](const KnobDesc& o) { return o.name == k.name; });
                if (!seen) out.push_back(k);
            }
        }
    }
    return out;
}

}  // namespace tandem::kernels
