// Parameter values as text and JSON. See param_values.hpp.
#include "host/params/param_values.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <stdexcept>
#include <string_view>

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

void set_param(RunRequest& r, Param p, const std::string& text) {
    switch (p) {
        case Param::Op: r.op = text; return;
        case Param::Variant: r.variant = text; return;
        case Param::Schedule: r.schedule = text; return;
        case Param::Dtype: r.dtype = parse_dtype_text(text); return;
        case Param::OutDtype: r.out_dtype = parse_dtype_text(text); return;
        case Param::Bias: r.bias = parse_bias_text(text); return;
        case Param::CommMode: r.comm_mode = parse_choice_text(param_desc(p), text); return;
        case Param::Fault: r.fault = text; return;
        case Param::Soc: r.soc = text; return;
        case Param::ProfileFile: r.profile_file = text; return;
        case Param::Ranks: r.ranks = parse_int_text(text); return;
        case Param::TimingOnly: r.timing_only = parse_flag_text(text); return;
        case Param::M: r.m = parse_int_text(text); return;
        case Param::K: r.k = parse_int_text(text); return;
        case Param::N: r.n = parse_int_text(text); return;
        case Param::BaseM: r.base_m = parse_int_text(text); return;
        case Param::BaseN: r.base_n = parse_int_text(text); return;
        case Param::ComputeBlocks: r.compute_blocks = parse_int_text(text); return;
        case Param::CommBlocks: r.comm_blocks = parse_int_text(text); return;
        case Param::Sanitize: r.sanitize = parse_flag_text(text); return;
        case Param::RunMode: case Param::AllViews: case Param::AsyncOp: case Param::HostThreads: case Param::Help:
        case Param::ListOps: case Param::Json: case Param::Trace: case Param::TraceRanks: case Param::TraceWindowUs:
        case Param::OutDir: case Param::WriteInputs: case Param::InputDir: case Param::Quiet: case Param::Sweep:
        case Param::Tune: case Param::SweepOut: case Param::Jobs: break;
    }
    not_a_run_param(p);
}

std::optional<std::string> param_text(const RunRequest& r, Param p) {
    auto text_or_unset = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
    auto int_or_unset = [](const std::optional<int>& v) {
        return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
    };
    switch (p) {
        case Param::Op: return r.op;
        case Param::Variant: return text_or_unset(r.variant);
        case Param::Schedule: return text_or_unset(r.schedule);
        case Param::Dtype: return std::string(dtype_name(r.dtype));
        case Param::OutDtype: return r.out_dtype ? std::optional<std::string>(dtype_name(*r.out_dtype)) : std::nullopt;
        case Param::Bias: return std::string(kernels::bias_name(r.bias));
        case Param::CommMode: return text_or_unset(r.comm_mode);
        case Param::Fault: return text_or_unset(r.fault);
        case Param::Soc: return r.soc;
        case Param::ProfileFile: return text_or_unset(r.profile_file);
        case Param::Ranks: return std::to_string(r.ranks);
        case Param::TimingOnly: return std::string(r.timing_only ? "true" : "false");
        case Param::M: return std::to_string(r.m);
        case Param::K: return std::to_string(r.k);
        case Param::N: return std::to_string(r.n);
        case Param::BaseM: return std::to_string(r.base_m);
        case Param::BaseN: return std::to_string(r.base_n);
        case Param::ComputeBlocks: return int_or_unset(r.compute_blocks);
        case Param::CommBlocks: return int_or_unset(r.comm_blocks);
        case Param::Sanitize: return std::string(r.sanitize ? "true" : "false");
        case Param::RunMode: case Param::AllViews: case Param::AsyncOp: case Param::HostThreads: case Param::Help:
        case Param::ListOps: case Param::Json: case Param::Trace: case Param::TraceRanks: case Param::TraceWindowUs:
        case Param::OutDir: case Param::WriteInputs: case Param::InputDir: case Param::Quiet: case Param::Sweep:
        case Param::Tune: case Param::SweepOut: case Param::Jobs: break;
    }
    not_a_run_param(p);
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
