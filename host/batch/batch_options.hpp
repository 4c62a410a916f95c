#pragma once
// What a command that runs many configurations (`--sweep FILE`, `--tune`) is asked besides the
// run's parameters, which are its rows' defaults or the shape it searches.
#include <optional>
#include <string>

namespace tandem::host {

struct BatchOptions {
    std::string sweep_file;   // --sweep FILE: run every row of FILE (host/batch/sweep_plan.hpp)
    bool tune = false;        // --tune: search the shape's tiles, knobs and block split (host/batch/tune.hpp)
    std::string out_prefix;   // --sweep-out PREFIX (default: out/sweep, out/tune with --tune)
    std::optional<int> jobs;  // --jobs N: configurations run at once (default: the host's cores)
    bool quiet = false;       // no progress line, no table (the summary and errors only)

    bool any() const { return tune || !sweep_file.empty(); }
};

}  // namespace tandem::host
