#include "kernels/param_error.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tandem::kernels {

namespace {

constexpr const char* kMentionOpen = "{@";
constexpr const char* kMentionClose = "}";

std::string knob_word(const std::string& name) {
    std::string word = name;
    std::replace(word.begin(), word.end(), '_', '-');
    return word;
}

std::string neutral_one(const ParamValue& p) { return fmt::format("{} = {}", p.word, p.value); }

std::string neutral_mention(const std::string& name) {
    for (const ParamRef& r : common_param_refs()) {
        if (name == r.name) return r.word;
    }
    return knob_word(name);
}

// `detail` with every mention written by `spelling`.
std::string expand_mentions(const std::string& detail, const ParamSpelling& spelling) {
    std::string out;
    std::size_t at = 0;
    for (;;) {
        const std::size_t open = detail.find(kMentionOpen, at);
        const std::size_t close = open == std::string::npos ? open : detail.find(kMentionClose, open);
        if (close == std::string::npos) return out + detail.substr(at);
        out += detail.substr(at, open - at);
        out += spelling.mentioned(detail.substr(open + 2, close - open - 2));
        at = close + 1;
    }
}

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
        kParamBias,    kParamCommMode, kParamFault,    kParamTimingOnly, kParamOp, kParamSoc};
    return refs;
}

ParamValue::ParamValue(const ParamRef& p, std::string v) : name(p.name), word(p.word), value(std::move(v)) {}

ParamValue::ParamValue(const ParamRef& p, long long v) : ParamValue(p, std::to_string(v)) {}

ParamValue ParamValue::knob(const std::string& name, long long v) {
    const std::string word = knob_word(name);
    return ParamValue(ParamRef{name.c_str(), word.c_str()}, v);
}

std::string mention(const ParamRef& p) { return std::string(kMentionOpen) + p.name + kMentionClose; }

std::string mention_knob(const std::string& name) { return std::string(kMentionOpen) + name + kMentionClose; }

const ParamSpelling& neutral_spelling() {
    static const ParamSpelling spelling{&neutral_one, ", ", &neutral_mention};
    return spelling;
}

namespace {
std::string compose(const std::vector<ParamValue>& subject, const std::string& detail,
                    const std::vector<ParamValue>& nearest, const ParamSpelling& spelling) {
    std::string out = fmt::format("{}: {}", join(subject, spelling), expand_mentions(detail, spelling));
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
