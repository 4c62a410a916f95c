// The parameter schema as the API and the Python module see it: parameters(), set_config().
#include <algorithm>

#include <fmt/format.h>

#include "api/config_fields.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/nearest_word.hpp"
#include "host/params/param_values.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "tandem/tandem.hpp"

namespace tandem::api {
namespace {

const char* type_name(host::ParamType t) {
    switch (t) {
        case host::ParamType::Int: return "int";
        case host::ParamType::Choice: return "choice";
        case host::ParamType::Text: return "text";
        case host::ParamType::Path: return "path";
        case host::ParamType::Flag: return "flag";
    }
    return "text";
}

const char* place_name(host::PythonPlace p) {
    switch (p) {
        case host::PythonPlace::None: return "";
        case host::PythonPlace::Context: return "context";
        case host::PythonPlace::Config: return "config";
        case host::PythonPlace::Call: return "call";
        case host::PythonPlace::Tensors: return "tensors";
    }
    return "";
}

// The parameter `key` names: its name, or its Python keyword or an alias of it; null: none (a knob).
const host::ParamDesc* param_of_key(const std::string& key) {
    if (const host::ParamDesc* p = host::find_param(key)) return p;
    return host::param_of_python_keyword(key);
}

// Where a parameter without an OpConfig field is given instead.
std::string elsewhere(const host::ParamDesc& p) {
    switch (p.python_place) {
        case host::PythonPlace::Tensors: return "it is read off the call's tensors";
        case host::PythonPlace::Context:
            return p.python_and_api_opposite
                       ? fmt::format("it is the context's, as its opposite: tandem.Context({}=False), {} = false",
                                     p.python_keyword, p.api_field)
                       : fmt::format("it is the context's: tandem.Context({}=...), {}", p.python_keyword, p.api_field);
        case host::PythonPlace::Call: return "it is an argument of the call";
        default: return "it is not a parameter of a call";
    }
}

// OpConfig's field for `key`; Error when `key` names a parameter OpConfig does not hold.
const detail::ConfigField* field_of_key(const std::string& key) {
    const host::ParamDesc* p = param_of_key(key);
    if (p == nullptr) return nullptr;  // a knob
    const detail::ConfigField* f = detail::config_field_of(p->id);
    if (f == nullptr) throw Error(fmt::format("config['{}']: not a key of a call's config: {}", key, elsewhere(*p)));
    return f;
}

// A key that names no parameter and no op's knob is a typo, not a knob to try: say so, with the
// nearest known key ("varient" -> "variant"), before its value is read as a knob's integer.
void check_known_key(const std::string& key) {
    if (param_of_key(key) != nullptr) return;
    std::vector<std::string> known;
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        if (k.name == key) return;
        known.push_back(k.name);
    }
    for (const detail::ConfigField& f : detail::config_fields()) {
        const host::ParamDesc& p = host::param_desc(f.param);
        known.push_back(p.python_keyword.empty() ? p.name : p.python_keyword);
        known.insert(known.end(), p.python_aliases.begin(), p.python_aliases.end());
    }
    const std::string nearest = host::nearest_word(key, known);
    throw Error(fmt::format("config['{}']: not a config key or a knob of any op{}", key,
                            nearest.empty() ? "" : fmt::format("; the nearest known key: '{}'", nearest)));
}

}  // namespace

std::string config_key_type(const std::string& key) {
    const detail::ConfigField* f = field_of_key(key);
    if (f == nullptr) return "int";
    const host::ParamType t = host::param_desc(f->param).type;
    return t == host::ParamType::Int ? "int" : (t == host::ParamType::Flag ? "flag" : "text");
}

void set_config(OpConfig& config, const std::string& key, const ConfigValue& value) {
    check_known_key(key);
    const std::string type = config_key_type(key);
    if (field_of_key(key) == nullptr && std::holds_alternative<std::string>(value)) {
        // A knob's word (moe_ffn's routing="zipf:1.2"): the knob values it stands for.
        try {
            for (const auto& [knob, v] : host::parse_knob_text(key, std::get<std::string>(value))) config.knobs[knob] = v;
        } catch (const SimError& e) {
            throw Error(fmt::format("config['{}']: {}", key, e.what()));
        }
        return;
    }
    const bool fits = (type == "int" && std::holds_alternative<int>(value)) ||
                      (type == "flag" && std::holds_alternative<bool>(value)) ||
                      (type == "text" && std::holds_alternative<std::string>(value));
    if (!fits) throw Error(fmt::format("config['{}']: takes {} (a variant's knob takes an integer)", key, type));
    if (const detail::ConfigField* f = field_of_key(key)) {
        try {
            f->set(config, value);
        } catch (const SimError& e) {  // a text the parameter cannot read ("0,x" for trace_ranks)
            throw Error(fmt::format("config['{}']: {}", key, e.what()));
        }
    } else {
        config.knobs[key] = std::get<int>(value);
    }
}

std::vector<ParameterInfo> parameters() {
    std::vector<ParameterInfo> out;
    for (const host::ParamDesc& p : host::param_schema()) {
        if (p.api_field.empty() && p.python_keyword.empty()) continue;
        ParameterInfo info{p.name, type_name(p.type), p.help, p.api_field, p.python_keyword, p.python_aliases,
                           place_name(p.python_place), p.python_call_keyword, std::nullopt, std::nullopt};
        if (p.range) {
            info.min_value = p.range->lo;
            info.max_value = p.range->hi;
        }
        out.push_back(std::move(info));
    }
    return out;
}

}  // namespace tandem::api
