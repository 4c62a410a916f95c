#include "api/config_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/trace/chrome_trace.hpp"

namespace tandem::api::detail {
namespace {

// The text of a field, and setting it, by the field's type: a name (empty: unset), a count (0:
// unset; a negative one is given, and refused by its parameter's range) or a flag. The trace's rank list and window take the command line's forms ("0,3",
// "START:END"; parse errors are SimErrors naming the text).
std::optional<std::string> text_of(const std::string& v) { return v.empty() ? std::nullopt : std::optional(v); }
std::optional<std::string> text_of(int v) { return v != 0 ? std::optional(std::to_string(v)) : std::nullopt; }
std::optional<std::string> text_of(bool v) { return std::string(v ? "true" : "false"); }
std::optional<std::string> text_of(const std::vector<int>& ranks) {
    if (ranks.empty()) return std::nullopt;
    return fmt::format("{}", fmt::join(ranks, ","));
}
std::optional<std::string> text_of(const std::optional<std::pair<double, double>>& w) {
    if (!w) return std::nullopt;
    return fmt::format("{}:{}", w->first, w->second);
}
void assign(std::string& field, const ConfigValue& v) { field = std::get<std::string>(v); }
void assign(int& field, const ConfigValue& v) { field = std::get<int>(v); }
void assign(bool& field, const ConfigValue& v) { field = std::get<bool>(v); }
void assign(std::vector<int>& field, const ConfigValue& v) { field = parse_rank_list(std::get<std::string>(v)); }
void assign(std::optional<std::pair<double, double>>& field, const ConfigValue& v) {
    field = parse_window_us(std::get<std::string>(v));
}

template <auto Member>
ConfigField field(host::Param param, const char* member) {
    return ConfigField{param, member, [](const OpConfig& c) { return text_of(c.*Member); },
                       [](OpConfig& c, const ConfigValue& v) { assign(c.*Member, v); }};
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
    using host::Param;
    static const std::vector<ConfigField> fields = {
        field<&OpConfig::variant>(Param::Variant, "variant"),
        field<&OpConfig::schedule>(Param::Schedule, "schedule"),
        field<&OpConfig::base_m>(Param::BaseM, "base_m"),
        field<&OpConfig::base_n>(Param::BaseN, "base_n"),
        field<&OpConfig::compute_blocks>(Param::ComputeBlocks, "compute_blocks"),
        field<&OpConfig::comm_blocks>(Param::CommBlocks, "comm_blocks"),
        field<&OpConfig::comm_mode>(Param::CommMode, "comm_mode"),
        field<&OpConfig::all_views>(Param::AllViews, "all_views"),
        field<&OpConfig::fault>(Param::Fault, "fault"),
        field<&OpConfig::sanitize>(Param::Sanitize, "sanitize"),
        field<&OpConfig::warmup_runs>(Param::WarmupRuns, "warmup_runs"),
        field<&OpConfig::trace>(Param::Trace, "trace"),
        field<&OpConfig::trace_ranks>(Param::TraceRanks, "trace_ranks"),
        field<&OpConfig::trace_window_us>(Param::TraceWindowUs, "trace_window_us"),
    };
    return fields;
}

const ConfigField* config_field_of(host::Param p) {
    for (const ConfigField& f : config_fields()) {
        if (f.param == p) return &f;
    }
    return nullptr;
}

}  // namespace tandem::api::detail
