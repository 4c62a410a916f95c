// The files and the table of a sweep. See sweep_outputs.hpp.
#include "host/batch/sweep_outputs.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

namespace fs = std::filesystem;

std::string csv_cell(const nlohmann::json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    }
    return v.dump();
}

std::vector<std::string> sweep_csv_columns(const std::vector<SweepEntry>& entries) {
    std::vector<std::string> cols = contract_keys();
    cols.push_back("sweep_line");
    for (const char* key : {"op", "variant", "schedule", "dtype", "out_dtype", "bias", "comm_kind", "comm_payload_gib_s"}) {
        cols.push_back(key);
    }
    // The knobs of the ops that ran, in registry order.
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        const bool used = std::any_of(entries.begin(), entries.end(), [&](const SweepEntry& e) {
            return e.has_results && e.results.extras.contains(k.name);
        });
        if (used) cols.push_back(k.name);
    }
    return cols;
}

}  // namespace

nlohmann::json sweep_result_json(const SweepEntry& e) {
    nlohmann::json j = to_json(e.results);
    j["sweep_line"] = e.job.line;
    return j;
}

std::string sweep_csv(const std::vector<SweepEntry>& entries) {
    const std::vector<std::string> cols = sweep_csv_columns(entries);
    std::string out = fmt::format("{}\n", fmt::join(cols, ","));
    for (const SweepEntry& e : entries) {
        if (!e.has_results) continue;
        const nlohmann::json j = sweep_result_json(e);
        std::vector<std::string> cells;
        for (const auto& c : cols) cells.push_back(j.contains(c) ? csv_cell(j.at(c)) : std::string());
        out += fmt::format("{}\n", fmt::join(cells, ","));
    }
    return out;
}

nlohmann::json sweep_json(const std::vector<SweepEntry>& entries) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SweepEntry& e : entries) {
        if (e.has_results) arr.push_back(sweep_result_json(e));
    }
    return arr;
}

std::string format_sweep_table(const std::vector<SweepEntry>& entries) {
    // What ran, after the figures: op, variant (and its schedule when not the first) and comm mode,
    // each column as wide as its longest entry.
    std::size_t op_width = 2;
    std::size_t variant_width = 7;
    auto variant_of = [](const RunRequest& r) {
        const kernels::VariantDesc* v = r.op_desc == nullptr ? kernels::find_op(r.op).find_variant(r.variant) : nullptr;
        const bool first_schedule = v == nullptr || v->schedules.empty() || v->schedules.front() == r.schedule;
        return first_schedule ? r.variant : r.variant + " " + r.schedule;
    };
    for (const SweepEntry& e : entries) {
        if (!e.has_results) continue;
        op_width = std::max(op_width, e.results.id.run.op.size());
        variant_width = std::max(variant_width, variant_of(e.results.id.run).size());
    }
    std::string out = fmt::format("{:>6} {:>5} {:>7} {:>7} {:>7} {:>14} {:>8} {:>9}  {:<{}} {:<{}} {}\n", "line", "ranks", "m",
                                  "k", "n", "pipelined us", "TFLOPS", "overlap %", "op", op_width, "variant", variant_width,
                                  "comm mode");
    for (const SweepEntry& e : entries) {
        if (!e.has_results) continue;
        const RunRequest& run = e.results.id.run;
        const RunMetrics m = compute_metrics(e.results.id, e.results.times);
        out += fmt::format("{:>6} {:>5} {:>7} {:>7} {:>7} {:>14.3f} {:>8.2f} {:>9.1f}  {:<{}} {:<{}} {}{}\n", e.job.line,
                           run.ranks, run.m, run.k, run.n, e.results.times.pipelined_us, m.tflops_per_rank,
                           m.overlap_eff_pct, run.op, op_width, variant_of(run), variant_width, run.comm_mode,
                           e.status == SweepStatus::Failed ? "  verification FAILED" : "");
    }
    return out;
}

void prepare_sweep_out(const std::string& prefix) {
    const fs::path path(prefix);
    if (!path.has_filename()) {
        throw tandem::SimError(
            fmt::format("--sweep-out {}: a file prefix is needed (PREFIX.csv and PREFIX.json are written)", prefix));
    }
    for (const char* ext : {".csv", ".json"}) {
        std::error_code ignored;
        if (fs::is_directory(prefix + ext, ignored)) {
            throw tandem::SimError(fmt::format("--sweep-out {}: '{}{}' is a directory; choose another prefix", prefix,
                                               prefix, ext));
        }
    }
    const fs::path parent = path.parent_path();
    if (parent.empty()) return;
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (!fs::is_directory(parent)) {
        throw tandem::SimError(fmt::format("--sweep-out {}: cannot create directory '{}'{}", prefix, parent.string(),
                                           ec ? ": " + ec.message() : std::string()));
    }
}

}  // namespace tandem::host
