#pragma once
// OpConfig's fields, each by the schema parameter it is (host/params/param_schema.hpp: its
// api_field). A call's request is made from them through the schema, and the Python module's
// config keys set them through it (set_config); tests/host/param_schema_test.cpp holds this table and
// the schema's OpConfig:: fields to each other.
#include <optional>
#include <string>
#include <vector>

#include "host/params/param_schema.hpp"
#include "tandem/tandem.hpp"

namespace tandem::api::detail {

struct ConfigField {
    host::Param param;
    const char* member;  // "base_m": OpConfig::base_m
    // The value the caller gave, as the schema's text; nullopt: left to the default (0, "", false).
    std::optional<std::string> (*given)(const OpConfig&);
    // Sets the field from a value of the parameter's type (already checked).
    void (*set)(OpConfig&, const ConfigValue&);
};

// Every field of OpConfig but `knobs` (the variant's knobs, by their own names).
const std::vector<ConfigField>& config_fields();

// The field of parameter `p`, or null when OpConfig has none.
const ConfigField* config_field_of(host::Param p);

}  // namespace tandem::api::detail
