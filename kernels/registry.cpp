// The registry of ops. Adding an op: write kernels/<op>/ (its kernels and its OpDesc), then
// add its description to shipped_registry(), one line.
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
#include "kernels/moe_combine/op.hpp"
#include "kernels/moe_dispatch/op.hpp"
#include "kernels/moe_ffn/op.hpp"
#include "kernels/param_error.hpp"

namespace tandem::kernels {

const OpRegistry& shipped_registry() {
    static const OpRegistry registry({
        &allgather_gemm_op(),
        &matmul_all_scatter_op(),
        &all_gather_matmul_op(),
        &matmul_all_reduce_op(),
        &matmul_all_gather_op(),
        &matmul_reduce_scatter_op(),
        &gemm_op(),
        &moe_ffn_op(),
        &moe_dispatch_op(),
        &moe_combine_op(),
    });
    return registry;
}

OpRegistry::OpRegistry(std::vector<const OpDesc*> ops) : ops_(std::move(ops)) {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
        if (ops_[i]->variants.empty()) throw SimError(fmt::format("op registry: op {} has no variant", ops_[i]->name));
        for (std::size_t j = 0; j < i; ++j) {
            if (ops_[j]->name == ops_[i]->name)
                throw SimError(fmt::format("op registry: two ops are named {} ({} and {})", ops_[i]->name,
                                           ops_[j]->title, ops_[i]->title));
        }
    }
}

const OpDesc& OpRegistry::find(const std::string& name) const {
    std::vector<std::string> names;
    for (const OpDesc* op : ops_) {
        if (op->name == name) return *op;
        names.push_back(op->name);
    }
    throw ParamError({{kParamOp, name}}, fmt::format("no such op (ops: {})", fmt::join(names, ", ")));
}

std::vector<KnobDesc> OpRegistry::knobs() const {
    std::vector<KnobDesc> out;
    for (const OpDesc* op : ops_) {
        for (const VariantDesc& v : op->variants) {
            for (const KnobDesc& k : v.knobs) {
                const bool seen = std::any_of(out.begin(), out.end(), [&](const KnobDesc& o) { return o.name == k.name; });
                if (!seen) out.push_back(k);
            }
        }
    }
    return out;
}

const std::vector<const OpDesc*>& registered_ops() { return shipped_registry().ops(); }

const OpDesc& find_op(const std::string& name) { return shipped_registry().find(name); }

std::vector<KnobDesc> all_knobs() { return shipped_registry().knobs(); }

}  // namespace tandem::kernels
