#include "kernels/op_desc.hpp"

#include <utility>

#include "sim/mem/bf16.hpp"
#include "sim/mem/fp16.hpp"

namespace tandem::kernels {

const char* view_name(ViewKind v) {
    switch (v) {
        case ViewKind::ComputeOnly: return "compute-only";
        case ViewKind::Sequential: return "sequential";
        case ViewKind::Pipelined: return "pipelined";
    }
    return "?";
}

const char* bias_name(BiasKind b) {
    switch (b) {
        case BiasKind::None: return "none";
        case BiasKind::M: return "m";
        case BiasKind::N: return "n";
    }
    return "?";
}

std::optional<int> OpParams::knob(const std::string& name) const {
    const auto it = knobs.find(name);
    if (it == knobs.end()) return std::nullopt;
    return it->second;
}

VariantDesc derive_variant(const VariantDesc& defaults, std::string name, std::string doc) {
    VariantDesc v = defaults;
    v.name = std::move(name);
    v.doc = std::move(doc);
    return v;
}

float OwnMathInput::at(int r, int c) const {
    const std::uint16_t bits = data[r * ld + c];
    return dtype == DType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
}

std::string OpInstance::signal_name(int, std::int64_t) const { return {}; }

const VariantDesc* OpDesc::find_variant(const std::string& name) const {
    for (const VariantDesc& v : variants) {
        if (v.name == name) return &v;
    }
    return nullptr;
}

}  // namespace tandem::kernels
