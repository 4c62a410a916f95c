// Sweep rows made runs. See sweep_plan.hpp.
#include "host/batch/sweep_plan.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "host/ops/op_facade.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "host/params/param_words.hpp"
#include "sim/sim_error.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
namespace {

namespace fs = std::filesystem;

// A profile column naming a file rather than a SoC.
bool names_a_file(const std::string& value) {
    std::string tail = value.size() > 5 ? value.substr(value.size() - 5) : std::string();
    for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return value.find('/') != std::string::npos || tail == ".toml";
}

// The row's parameters over the command line's. Throws tandem::SimError naming the column.
RunRequest request_of(const RowFields& row, const fs::path& file, const RunRequest& defaults) {
    for (const std::string& req : required_sweep_columns()) {
        if (!row.count(req)) fail(fmt::format("missing {} (required: {})", req, fmt::join(required_sweep_columns(), ", ")));
    }
    RunRequest r = defaults;
    r.timing_only = true;  // a sweep is meant to be cheap; a row asks for data with timing_only=false
    for (const auto& [column, value] : row) {
        const ParamDesc* p = param_of_sweep_column(column);
        try {
            if (p != nullptr && p->id == Param::Soc && names_a_file(value)) {
                fs::path path = value;
                // A relative path is taken as given, else next to the sweep file.
                if (path.is_relative() && !fs::exists(path) && fs::exists(file.parent_path() / path)) {
                    path = file.parent_path() / path;
                }
                r.profile_file = path.string();
            } else if (p != nullptr) {
                set_param(r, p->id, value);
                if (p->id == Param::Soc) r.profile_file.clear();
            } else {
                // sweep_columns(): a knob's name (a word may set other knobs too)
                for (const auto& [knob, v] : parse_knob_text(column, value)) r.knobs[knob] = v;
            }
        } catch (const tandem::SimError& e) {
            fail(fmt::format("{}: {}", column, e.what()));
        }
    }
    // A row naming another op (or variant) than the command line's takes that op's defaults for
    // what it does not give itself. An op outside the registry (RunRequest::op_desc: an API
    // user's op, a test's) is the rows' op unless a row names another.
    if (row.count("op") && r.op != defaults.op) {
        r.op_desc = nullptr;
        if (!row.count("variant")) r.variant.clear();
        if (!row.count("schedule")) r.schedule.clear();
        if (!row.count("out_dtype")) r.out_dtype.reset();
    } else if (row.count("variant") && r.variant != defaults.variant) {
        if (!row.count("schedule")) r.schedule.clear();
        if (!row.count("out_dtype")) r.out_dtype.reset();
    }
    return r;
}

// One row resolved. Throws tandem::SimError with the row's problem in the command line's words
// (the command line's flags are the rows' defaults).
SweepJob job_of(const SweepRow& row, const fs::path& file, const char* where, const RunRequest& defaults,
                ProfileCache& profiles) {
    const RunRequest r = request_of(row.fields, file, defaults);
    std::shared_ptr<const Profile> profile;
    try {
        profile = profiles.of(r);
    } catch (const tandem::SimError& e) {
        fail(fmt::format("profile: {}", e.what()));
    }
    SweepJob job;
    job.line = row.line;
    job.origin = fmt::format("sweep {} {} {}", file.string(), where, row.line);
    try {
        job.run = resolve_run(r, *profile);
    } catch (const tandem::SimError& e) {
        fail(message_in(e, Dialect::Cli));
    }
    job.profile = std::move(profile);
    return job;
}

}  // namespace

SweepPlan plan_sweep_text(const std::string& text, const fs::path& name, const RunRequest& defaults,
                          ProfileCache& profiles) {
    SweepRows rows = read_sweep_rows(text, name);
    SweepPlan plan;
    plan.bad = std::move(rows.bad);
    for (const SweepRow& row : rows.rows) {
        try {
            plan.jobs.push_back(job_of(row, name, rows.where, defaults, profiles));
        } catch (const tandem::SimError& e) {
            plan.bad.push_back({row.line, fmt::format("sweep {} {} {}: {}", name.string(), rows.where, row.line, e.what())});
        }
    }
    // Rows that could not be read and rows that could not run, together in input order.
    std::stable_sort(plan.bad.begin(), plan.bad.end(),
                     [](const SweepRowError& a, const SweepRowError& b) { return a.line < b.line; });
    return plan;
}

std::string read_sweep_file(const fs::path& file) {
    if (!fs::is_regular_file(file)) fail(fmt::format("--sweep {}: no such file", file.string()));
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) fail(fmt::format("--sweep {}: cannot read the file", file.string()));
    return ss.str();
}

SweepPlan plan_sweep(const fs::path& file, const RunRequest& defaults, ProfileCache& profiles) {
    return plan_sweep_text(read_sweep_file(file), file, defaults, profiles);
}

}  // namespace tandem::host
