// Parameters in their callers' words. See param_words.hpp.
#include "host/params/param_words.hpp"

#include <fmt/format.h>

#include "host/params/param_schema.hpp"

namespace tandem::host {
namespace {

// A command line's name: the one-letter alias where there is one (-n), else the flag.
std::string cli_name(const ParamDesc& p) {
    for (const std::string& alias : p.cli_aliases) {
        if (alias.size() == 2 && alias[0] == '-') return alias;
    }
    return p.cli_flag;
}

// The C++ API names a parameter by its field where the field has the parameter's own name and
// meaning (OpConfig::base_m, ContextOptions::ranks); otherwise (the shape, read off the tensors;
// `functional`, the opposite of timing-only) by its neutral word.
std::string cpp_name(const ParamDesc& p) {
    const std::string suffix = "::" + p.name;
    const bool own_field = p.api_field.size() > suffix.size() &&
                           p.api_field.compare(p.api_field.size() - suffix.size(), suffix.size(), suffix) == 0;
    return own_field ? p.name : p.word;
}

// A detail's mention of a parameter: its name; a flag as the setting that turns it on
// ("--timing-only", "functional=False", "functional = false").
std::string mention_in(const std::string& name, Dialect d) {
    const ParamDesc* p = find_param(name);
    if (p == nullptr) return param_name_in(name, d);
    const bool has_setting = d == Dialect::Python ? !p->python_keyword.empty() : !p->api_field.empty();
    if (p->type != ParamType::Flag || d == Dialect::Cli || !has_setting) return param_name_in(name, d);
    const bool on = !p->python_and_api_opposite;
    if (d == Dialect::Python) return fmt::format("{}={}", p->python_keyword, on ? "True" : "False");
    const std::string field = p->api_field.substr(p->api_field.rfind("::") + 2);
    return fmt::format("{} = {}", field, on ? "true" : "false");
}

std::string cli_one(const kernels::ParamValue& v) { return param_value_in(v, Dialect::Cli); }
std::string python_one(const kernels::ParamValue& v) { return param_value_in(v, Dialect::Python); }
std::string cpp_one(const kernels::ParamValue& v) { return param_value_in(v, Dialect::Cpp); }
std::string cli_mention(const std::string& name) { return mention_in(name, Dialect::Cli); }
std::string python_mention(const std::string& name) { return mention_in(name, Dialect::Python); }
std::string cpp_mention(const std::string& name) { return mention_in(name, Dialect::Cpp); }

const kernels::ParamSpelling& spelling_of(Dialect d) {
    static const kernels::ParamSpelling cli{&cli_one, " ", &cli_mention};
    static const kernels::ParamSpelling python{&python_one, ", ", &python_mention};
    static const kernels::ParamSpelling cpp{&cpp_one, ", ", &cpp_mention};
    switch (d) {
        case Dialect::Cli: return cli;
        case Dialect::Python: return python;
        case Dialect::Cpp: return cpp;
    }
    return cpp;
}

}  // namespace

std::string param_name_in(const std::string& name, Dialect d) {
    const ParamDesc* p = find_param(name);
    if (p == nullptr) return d == Dialect::Cli ? knob_flag(name) : name;  // a knob
    switch (d) {
        case Dialect::Cli: return p->cli_flag.empty() ? p->name : cli_name(*p);
        case Dialect::Python: return p->python_keyword.empty() ? p->name : p->python_keyword;
        case Dialect::Cpp: return cpp_name(*p);
    }
    return p->name;
}

std::string param_value_in(const kernels::ParamValue& v, Dialect d) {
    const std::string name = param_name_in(v.name, d);
    switch (d) {
        case Dialect::Cli: return fmt::format("{} {}", name, v.value);
        case Dialect::Python: return fmt::format("{}={}", name, v.value);
        case Dialect::Cpp: return fmt::format("{} = {}", name, v.value);
    }
    return name;
}

std::string message_in(const std::exception& e, Dialect d) {
    if (const auto* p = dynamic_cast<const kernels::ParamError*>(&e)) return kernels::format_param_error(*p, spelling_of(d));
    return e.what();
}

}  // namespace tandem::host
