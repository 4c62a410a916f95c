#pragma once
// `tandem diff A.json B.json`: which figures of two results JSONs (docs/RESULTS.md; two runs, two
// variants, two builds) moved and by how much, the way a user compares runs.
//
// The runs' identities first (the parameters that differ: "variant two_shot -> ring"), then every
// number that differs, B against A with its change and relative change, in four groups: the run's
// figures (top-level keys), its kernels (each launch's device time and pipe ratios, by view,
// launch and kernel), its ranks (per_rank) and its stages; each group by the size of the
// relative change (the summary's figures first), the first `limit` of each (all with limit 0). Aliases of another key
// (allgather_*, tflops_pipelined) are left out. Two sweeps' arrays are compared entry by entry,
// matched by sweep_line.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::host {

struct DiffOptions {
    int limit = 12;          // lines per group (0: every one)
    double min_rel_pct = 0;  // leave out changes smaller than this (percent of A's value)
};

// The text of the comparison of results `a` and `b` (objects); `moved` is set to whether any
// figure differs.
std::string diff_results(const nlohmann::json& a, const nlohmann::json& b, const DiffOptions& options, bool& moved);

// The `diff` command: args are what follows `tandem diff` (A.json B.json [--all] [--min-pct P]).
// Exit status as diff(1): 0 nothing moved, 1 some figure moved, 2 an error (one line on `err`).
int run_diff_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tandem::host
