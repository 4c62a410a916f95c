#pragma once
// `--list-ops --json FILE`: the registry as data, for the scripts and docs that list the ops
// (scripts/docs_figures.py's op tables, scripts/compare_runs.sh's configurations,
// scripts/op_family_sweep.py), so that none of them lists an op or a variant by hand.
#include <nlohmann/json.hpp>

namespace tandem::host {

// {"ops": [{name, title, doc, comm_kind, min_ranks, own_math, own_output (an op with its own math:
// what each rank gets, when it says), seed_format, sharding, test_shapes
// (by ranks), bench_shape, scale_shape, variants: [{name, doc, constraints, schedules, dtypes,
// out_dtypes, takes_bias, comm_modes, sharding, default_shape, knobs: [{name, flag, aliases, doc,
// tune_values, words}]}]}]}, in registry order (the first op and each op's first variant are the
// defaults). A sharding is {a, b, out: "replicated" | "rows" | "cols", k_per_rank, out_like_a}.
nlohmann::json list_ops_json();

}  // namespace tandem::host
