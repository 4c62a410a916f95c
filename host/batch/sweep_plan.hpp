#pragma once
// A sweep file's rows made runs (`--sweep FILE`): each row starts from the command line's
// request (every parameter the command line gives is the rows' default; rows are timing-only
// unless a row's timing_only says false), takes its columns through the parameter schema and is
// resolved by the ops facade. A row that fails is reported with its line; the others run.
//
//   ProfileCache profiles;
//   SweepPlan plan = plan_sweep("rows.csv", cli_request, profiles);  // bad rows: plan.bad
#include <filesystem>
#include <string>
#include <vector>

#include "host/batch/profile_cache.hpp"
#include "host/batch/sweep_entry.hpp"
#include "host/batch/sweep_rows.hpp"
#include "host/params/run_request.hpp"

namespace tandem::host {

struct SweepPlan {
    std::vector<SweepJob> jobs;       // the good rows, in input order
    std::vector<SweepRowError> bad;   // the bad rows, in input order
    int rows() const { return static_cast<int>(jobs.size() + bad.size()); }
};

// Reads and plans a sweep file. Throws tandem::SimError for a file that cannot be used at all
// (missing, not CSV/JSON, a header with an unknown or repeated column, no rows).
SweepPlan plan_sweep(const std::filesystem::path& file, const RunRequest& defaults, ProfileCache& profiles);

// A sweep file's bytes. Throws tandem::SimError if it is missing or unreadable.
std::string read_sweep_file(const std::filesystem::path& file);

// Same as plan_sweep, from text (`name` is used in messages and to resolve relative profile paths).
SweepPlan plan_sweep_text(const std::string& text, const std::filesystem::path& name, const RunRequest& defaults,
                          ProfileCache& profiles);

}  // namespace tandem::host
