#include "api/config_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/trace/chrome_trace.hpp"

namespace tandem::api::detail {
namespace {

std::optional<std::string> text_or_unset(const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); }
std::optional<std::string> count_or_unset(int v) { return v > 0 ? std::optional(std::to_string(v)) : std::nullopt; }
std::optional<std::string> flag_text(bool on) { return std::string(on ? "true" : "false"); }
std::optional<std::string> ranks_or_unset(const std::vector<int>& ranks) {
    if (ranks.empty()) return std::nullopt;
    return fmt::format("{}", fmt::join(ranks, ","));
}
std::optional<std::string> window_or_unset(const std::optional<std::pair<double, double>>& w) {
    if (!w) return std::nullopt;
    return fmt::format("{}:{}", w->first, w->second);
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
    using host::Param;
    static const std::vector<ConfigField> fields = {
        {Param::Variant, "variant", [](const OpConfig& c) { return text_or_unset(c.variant); },
         [](OpConfig& c, const ConfigValue& v) { c.variant = std::get<std::string>(v); }},
        {Param::Schedule, "schedule", [](const OpConfig& c) { return text_or_unset(c.schedule); },
         [](OpConfig& c, const ConfigValue& v) { c.schedule = std::get<std::string>(v); }},
        {Param::BaseM, "base_m", [](const OpConfig& c) { return count_or_unset(c.base_m); },
         [](OpConfig& c, const ConfigValue& v) { c.base_m = std::get<int>(v); }},
        {Param::BaseN, "base_n", [](const OpConfig& c) { return count_or_unset(c.base_n); },
         [](OpConfig& c, const ConfigValue& v) { c.base_n = std::get<int>(v); }},
        {Param::ComputeBlocks, "compute_blocks", [](const OpConfig& c) { return count_or_unset(c.compute_blocks); },
         [](OpConfig& c, const ConfigValue& v) { c.compute_blocks = std::get<int>(v); }},
        {Param::CommBlocks, "comm_blocks", [](const OpConfig& c) { return count_or_unset(c.comm_blocks); },
         [](OpConfig& c, const ConfigValue& v) { c.comm_blocks = std::get<int>(v); }},
        {Param::CommMode, "comm_mode", [](const OpConfig& c) { return text_or_unset(c.comm_mode); },
         [](OpConfig& c, const ConfigValue& v) { c.comm_mode = std::get<std::string>(v); }},
        {Param::AllViews, "all_views", [](const OpConfig& c) { return flag_text(c.all_views); },
         [](OpConfig& c, const ConfigValue& v) { c.all_views = std::get<bool>(v); }},
        {Param::Fault, "fault", [](const OpConfig& c) { return text_or_unset(c.fault); },
         [](OpConfig& c, const ConfigValue& v) { c.fault = std::get<std::string>(v); }},
        {Param::Sanitize, "sanitize", [](const OpConfig& c) { return flag_text(c.sanitize); },
         [](OpConfig& c, const ConfigValue& v) { c.sanitize = std::get<bool>(v); }},
        {Param::Trace, "trace", [](const OpConfig& c) { return text_or_unset(c.trace); },
         [](OpConfig& c, const ConfigValue& v) { c.trace = std::get<std::string>(v); }},
        // The command line's forms: "0,3" and "START:END" (parse errors are SimErrors naming the text).
        {Param::TraceRanks, "trace_ranks", [](const OpConfig& c) { return ranks_or_unset(c.trace_ranks); },
         [](OpConfig& c, const ConfigValue& v) { c.trace_ranks = parse_rank_list(std::get<std::string>(v)); }},
        {Param::TraceWindowUs, "trace_window_us", [](const OpConfig& c) { return window_or_unset(c.trace_window_us); },
         [](OpConfig& c, const ConfigValue& v) { c.trace_window_us = parse_window_us(std::get<std::string>(v)); }},
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
