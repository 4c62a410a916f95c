#include "kernels/param_error.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tandem::kernels {

namespace {

std::string neutral_one(const ParamValue& p) { return fmt::format("{} = {}", p.word, p.value); }

std::string join(const std::vector<ParamValue>& values, const ParamSpelling& spelling) {
    std::string out;
    for (const ParamValue& v : values) out += (out.empty() ? "" : spelling.separator) + spelling.one(v);
    return out;
}

bool same_names(const std::vector<ParamValue>& a, const std::vector<ParamValue>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const ParamValue& x, const ParamValue& y) { return x.name == y.name; });
}

}  // namespace

const std::vector<ParamRef>& common_param_refs() {
    static const std::vector<ParamRef> refs = {
        kParamRanks,   kParamM,        kParamK,        kParamN,     kParamBaseM,    kParamBaseN,
        kParamComputeBlocks, kParamCommBlocks, kParamVariant, kParamSchedule, kParamDtype, kParamOutDtype,
        kParamBias,    kParamCommMode, kParamFault,    kParamTimingOnly, kParamOp};
    return refs;
}

ParamValue::ParamValue(const ParamRef& p, std::string v) : name(p.name), word(p.word), value(std::move(v)) {}

ParamValue::ParamValue(const ParamRef& p, long long v) : ParamValue(p, std::to_string(v)) {}

ParamValue ParamValue::knob(const std::string& name, long long v) {
    std::string word = name;
    std::replace(word.begin(), word.end(), '_', '-');
    const ParamRef ref{name.c_str(), word.c_str()};
    return ParamValue(ref, v);
}

const ParamSpelling& neutral_spelling() {
    static const ParamSpelling spelling{&neutral_one, ", "};
    return spelling;
}

namespace {
std::string compose(const std::vector<ParamValue>& subject, const std::string& detail,
                    const std::vector<ParamValue>& nearest, const ParamSpelling& spelling) {
    std::string out = fmt::format("{}: {}", join(subject, spelling), detail);
    if (nearest.empty()) return out;
    // A suggestion for exactly the refused parameter needs no name: "--gk 1000: ...; nearest valid: 1024".
    if (nearest.size() == 1 && same_names(nearest, subject)) return fmt::format("{}; nearest valid: {}", out, nearest.front().value);
    return fmt::format("{}; nearest valid: {}", out, join(nearest, spelling));
}
}  // namespace

std::string format_param_error(const ParamError& e, const ParamSpelling& spelling) {
    return compose(e.subject(), e.detail(), e.nearest(), spelling);
}

ParamError::ParamError(std::vector<ParamValue> subject, std::string detail, std::vector<ParamValue> nearest)
    : SimError(compose(subject, detail, nearest, neutral_spelling())),
      subject_(std::move(subject)),
      detail_(std::move(detail)),
      nearest_(std::move(nearest)) {}

}  // namespace tandem::kernels
