#pragma once
// What a sweep or a tune leaves: PREFIX.csv and PREFIX.json (every entry with results, in the
// order given; result objects, docs/RESULTS.md, plus `sweep_line`), and the table printed at its
// end.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/batch/sweep_entry.hpp"

namespace tandem::host {

// The result object (docs/RESULTS.md) of an entry with results (with the op's identity keys and
// the variant's knobs as used), plus `sweep_line`.
nlohmann::json sweep_result_json(const SweepEntry& e);

// The output files' contents: every entry with results, in the order given.
// CSV columns: the contract keys in docs/RESULTS.md order, then sweep_line, then op, variant, schedule,
// dtype, out_dtype, bias, comm_kind, comm_payload_gib_s, then the knobs any entry reports.
std::string sweep_csv(const std::vector<SweepEntry>& entries);
nlohmann::json sweep_json(const std::vector<SweepEntry>& entries);

// The end-of-sweep table: line, ranks, m, k, n, pipelined us, TFLOPS, overlap %.
std::string format_sweep_table(const std::vector<SweepEntry>& entries);

// Creates PREFIX's directory if missing; throws tandem::SimError naming it if that fails.
void prepare_sweep_out(const std::string& prefix);

}  // namespace tandem::host
