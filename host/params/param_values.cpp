// Parameter values as text and JSON. See param_values.hpp.
#include "host/params/param_values.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <stdexcept>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

[[noreturn]] void not_a_run_param(Param p) {
    throw std::logic_error(fmt::format("parameter '{}' is not one of a run's (ParamScope::Run)", param_desc(p).name));
}

}  // namespace

std::map<std::string, int> parse_knob_text(const std::string& knob, const std::string& text) {
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        if (k.name != knob || !k.parse_words) continue;
        try {
            return {{knob, parse_int_text(text)}};
        } catch (const SimError&) {
        }
        if (std::optional<std::map<std::string, int>> values = k.parse_words(text)) return *values;
        throw SimError(fmt::format("'{}' is neither a whole decimal number nor one of {}", text, k.words));
    }
    return {{knob, parse_int_text(text)}};
}

std::string lower_case(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

int parse_int_text(const std::string& text) {
    std::string_view digits = text;
    const bool negative = !digits.empty() && digits.front() == '-';
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
    if (digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
        fail(fmt::format("'{}' is not a whole decimal number", text));
    }
    digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    if (digits.size() > 10 || std::stoll(std::string(digits)) > INT_MAX) {
        fail(fmt::format("{} is out of range (at most {})", text, INT_MAX));
    }
    const long long v = std::stoll(std::string(digits));
    return static_cast<int>(negative ? -v : v);
}

bool parse_flag_text(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "true" || t == "1" || t == "yes") return true;
    if (t == "false" || t == "0" || t == "no") return false;
    fail(fmt::format("'{}' is not true or false (also accepted: 1/0, yes/no)", text));
}

std::string parse_choice_text(const ParamDesc& p, const std::string& text) {
    const std::string t = lower_case(text);
    if (std::find(p.choices.begin(), p.choices.end(), t) == p.choices.end()) {
        fail(fmt::format("'{}' is not one of {}", text, joined(p.choices)));
    }
    return t;
}

DType parse_dtype_text(const std::string& text) {
    const std::string t = lower_case(text);
    if (t == "fp16") return DType::F16;
    if (t == "fp32") return DType::F32;
    if (t == "bf16") return DType::BF16;
    if (t == "int8") return DType::I8;
    fail(fmt::format("'{}' is not one of {}", text, joined(param_desc(Param::Dtype).choices)));
}

kernels::BiasKind parse_bias_text(const std::string& text) {
    const std::string b = parse_choice_text(param_desc(Param::Bias), text);
    return b == "m" ? kernels::BiasKind::M : (b == "n" ? kernels::BiasKind::N : kernels::BiasKind::None);
}

const char* data_mode_name(bool timing_only) { return timing_only ? "timing-only" : "functional"; }

namespace {
template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
}  // namespace

// Each by the type of the parameter's RunRequest member (its schema row's run_member): one
// reading per type, whatever the parameter.
void set_param(RunRequest& r, Param p, const std::string& text) {
    const ParamDesc& d = param_desc(p);
    std::visit(Overloaded{
                   [&](std::monostate) { not_a_run_param(p); },
                   [&](std::string RunRequest::*m) { r.*m = d.type == ParamType::Choice ? parse_choice_text(d, text) : text; },
                   [&](int RunRequest::*m) { r.*m = parse_int_text(text); },
                   [&](std::optional<int> RunRequest::*m) { r.*m = parse_int_text(text); },
                   [&](bool RunRequest::*m) { r.*m = parse_flag_text(text); },
                   [&](DType RunRequest::*m) { r.*m = parse_dtype_text(text); },
                   [&](std::optional<DType> RunRequest::*m) { r.*m = parse_dtype_text(text); },
                   [&](kernels::BiasKind RunRequest::*m) { r.*m = parse_bias_text(text); },
               },
               d.run_member);
}

std::optional<std::string> param_text(const RunRequest& r, Param p) {
    using Text = std::optional<std::string>;
    return std::visit(Overloaded{
                          [&](std::monostate) -> Text { not_a_run_param(p); },
                          // Empty: unset (the op's, the variant's or the profile's, resolved per run).
                          [&](std::string RunRequest::*m) -> Text { return (r.*m).empty() ? Text() : Text(r.*m); },
                          [&](int RunRequest::*m) -> Text { return std::to_string(r.*m); },
                          [&](std::optional<int> RunRequest::*m) -> Text {
                              return r.*m ? Text(std::to_string(*(r.*m))) : Text();
                          },
                          [&](bool RunRequest::*m) -> Text { return std::string(r.*m ? "true" : "false"); },
                          [&](DType RunRequest::*m) -> Text { return std::string(dtype_name(r.*m)); },
                          [&](std::optional<DType> RunRequest::*m) -> Text {
                              return r.*m ? Text(dtype_name(*(r.*m))) : Text();
                          },
                          [&](kernels::BiasKind RunRequest::*m) -> Text { return std::string(kernels::bias_name(r.*m)); },
                      },
                      param_desc(p).run_member);
}

void unset_param(RunRequest& r, Param p) {
    std::visit(Overloaded{
                   [&](std::string RunRequest::*m) { (r.*m).clear(); },
                   [&](std::optional<int> RunRequest::*m) { (r.*m).reset(); },
                   [&](std::optional<DType> RunRequest::*m) { (r.*m).reset(); },
                   [&](auto) {},
               },
               param_desc(p).run_member);
}

nlohmann::json param_json(const RunRequest& r, Param p) {
    const ParamDesc& d = param_desc(p);
    if (p == Param::TimingOnly) return data_mode_name(r.timing_only);
    const std::optional<std::string> text = param_text(r, p);
    if (!text) return nullptr;
    if (d.type == ParamType::Int) return parse_int_text(*text);
    return *text;
}

void set_param_from_json(RunRequest& r, Param p, const nlohmann::json& value) {
    if (value.is_null()) return;  // unset
    if (p == Param::TimingOnly) {
        const std::string mode = value.get<std::string>();
        if (mode != data_mode_name(true) && mode != data_mode_name(false)) fail(fmt::format("data_mode '{}'", mode));
        r.timing_only = mode == data_mode_name(true);
        return;
    }
    set_param(r, p, value.is_number_integer() ? std::to_string(value.get<int>()) : value.get<std::string>());
}

}  // namespace tandem::host
