// Sweeps: sweep files to RunConfigs, the worker pool, the output files. See sweep.hpp.
#include "host/batch/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <ostream>
#include <set>
#include <span>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "host/run/program.hpp"
#include "host/io/atomic_file.hpp"
#include "host/cli/options.hpp"
#include "host/batch/sweep_wire.hpp"
#include "kernels/registry.hpp"
#include "sim/host_threads.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kRequired[] = {"ranks", "m", "k", "n"};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Column names are case-insensitive and '-' means '_'.
std::string normalize_column(const std::string& name) {
    std::string s = lower(trim(name));
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
}

bool known_column(const std::string& name) {
    const auto& cols = sweep_columns();
    return std::find(cols.begin(), cols.end(), name) != cols.end();
}

bool is_knob(const std::string& name) {
    const std::vector<kernels::KnobDesc> knobs = kernels::all_knobs();
    return std::any_of(knobs.begin(), knobs.end(), [&](const kernels::KnobDesc& k) { return k.name == name; });
}

std::string column_list() {
    std::string out;
    for (const auto& c : sweep_columns()) out += (out.empty() ? "" : ", ") + c;
    return out;
}

// One CSV line into fields: commas separate, a field may be "quoted" ("" is a quote inside).
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> fields;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"' && trim(cur).empty()) {
            cur.clear();
            quoted = true;
        } else if (c == ',') {
            fields.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted) throw tandem::SimError("a quoted field is not closed");
    fields.push_back(trim(cur));
    return fields;
}

// A row as text values by column (absent or empty: not set).
using RowFields = std::map<std::string, std::string>;

[[noreturn]] void fail(const std::string& message) { throw tandem::SimError(message); }

// Sizes are decimal as on the command line: [+-]digits that fit an int.
int parse_int(const std::string& column, const std::string& text) {
    std::string_view d = text;
    const bool negative = !d.empty() && d.front() == '-';
    if (!d.empty() && (d.front() == '-' || d.front() == '+')) d.remove_prefix(1);
    if (d.empty() || !std::all_of(d.begin(), d.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
        fail(fmt::format("{}: '{}' is not a whole decimal number", column, text));
    }
    d.remove_prefix(std::min(d.find_first_not_of('0'), d.size() - 1));
    if (d.size() > 10 || std::stoll(std::string(d)) > INT_MAX) {
        fail(fmt::format("{}: {} is out of range (at most {})", column, text, INT_MAX));
    }
    const long long v = std::stoll(std::string(d));
    return static_cast<int>(negative ? -v : v);
}

bool parse_bool(const std::string& column, const std::string& text) {
    const std::string t = lower(text);
    if (t == "true" || t == "1" || t == "yes") return true;
    if (t == "false" || t == "0" || t == "no") return false;
    fail(fmt::format("{}: '{}' is not true or false (also accepted: 1/0, yes/no)", column, text));
}

// A profile column naming a file rather than a SoC.
bool names_a_file(const std::string& value) {
    return value.find('/') != std::string::npos ||
           (value.size() > 5 && lower(value.substr(value.size() - 5)) == ".toml");
}

// Builds, checks and resolves one row. Throws tandem::SimError with the row's problem.
SweepJob build_job(const RowFields& row, int line, const fs::path& file, const RunConfig& defaults,
                   ProfileCache& profiles) {
    for (const char* req : kRequired) {
        if (!row.count(req)) fail(fmt::format("missing {} (required: ranks, m, k, n)", req));
    }
    RunConfig c;
    c.op = defaults.op;
    c.variant = defaults.variant;
    c.schedule = defaults.schedule;
    c.dtype = defaults.dtype;
    c.out_dtype = defaults.out_dtype;
    c.bias = defaults.bias;
    c.knobs = defaults.knobs;
    c.soc = defaults.soc;
    c.profile_file = defaults.profile_file;
    c.base_m = defaults.base_m;
    c.base_n = defaults.base_n;
    c.compute_blocks = defaults.compute_blocks;
    c.comm_blocks = defaults.comm_blocks;
    c.comm_mode = defaults.comm_mode;
    c.out_dir = defaults.out_dir;
    c.timing_only = true;  // a sweep is meant to be cheap; a row asks for data with timing_only=false
    c.quiet = true;
    for (const auto& [col, value] : row) {
        if (col == "ranks") c.ranks = parse_int(col, value);
        else if (col == "m") c.m = parse_int(col, value);
        else if (col == "k") c.k = parse_int(col, value);
        else if (col == "n") c.n = parse_int(col, value);
        else if (col == "base_m") c.base_m = parse_int(col, value);
        else if (col == "base_n") c.base_n = parse_int(col, value);
        else if (col == "compute_blocks") c.compute_blocks = parse_int(col, value);
        else if (col == "comm_blocks") c.comm_blocks = parse_int(col, value);
        else if (is_knob(col)) c.knobs[col] = parse_int(col, value);
        else if (col == "op") c.op = value;
        else if (col == "variant") c.variant = value;
        else if (col == "schedule") c.schedule = value;
        else if (col == "dtype") c.dtype = lower(value);
        else if (col == "out_dtype") c.out_dtype = lower(value);
        else if (col == "bias") {
            const std::string b = lower(value);
            if (b != "none" && b != "m" && b != "n") fail(fmt::format("bias: '{}' is not none, m or n", value));
            c.bias = b;
        }
        else if (col == "timing_only") c.timing_only = parse_bool(col, value);
        else if (col == "comm_mode") {
            const std::string mode = lower(value);
            if (mode != "mesh" && mode != "ring") fail(fmt::format("comm_mode: '{}' is not mesh or ring", value));
            c.comm_mode = mode == "ring" ? CommMode::Ring : CommMode::Mesh;
        } else if (col == "profile") {
            if (names_a_file(value)) {
                fs::path p = value;
                // A relative path is taken as given, else next to the sweep file.
                if (p.is_relative() && !fs::exists(p) && fs::exists(file.parent_path() / p)) p = file.parent_path() / p;
                c.profile_file = p.string();
            } else {
                c.soc = value;
                c.profile_file.clear();
            }
        }
    }
    // An op outside the registry (RunConfig::op_desc: an API user's op, a test's) is the rows'
    // op unless a row names another.
    if (c.op == defaults.op) c.op_desc = defaults.op_desc;
    if (row.count("op") && c.op != defaults.op) {
        if (!row.count("variant")) c.variant.clear();
        if (!row.count("schedule")) c.schedule.clear();
        if (!row.count("out_dtype")) c.out_dtype.clear();
    } else if (row.count("variant") && c.variant != defaults.variant) {
        if (!row.count("schedule")) c.schedule.clear();
        if (!row.count("out_dtype")) c.out_dtype.clear();
    }
    std::shared_ptr<const Profile> profile;
    try {
        profile = profiles.of(c);
    } catch (const tandem::SimError& e) {
        fail(fmt::format("profile: {}", e.what()));
    }
    apply_profile_defaults(c, *profile);
    validate_run_config(c, buffer_limits_of(*profile));
    SweepJob job;
    job.line = line;
    job.origin = fmt::format("sweep {} line {}", file.string(), line);
    job.cfg = std::move(c);
    job.profile = std::move(profile);
    return job;
}

void add_row(SweepPlan& plan, const RowFields& row, int line, const fs::path& file, const RunConfig& defaults,
             ProfileCache& profiles) {
    try {
        plan.jobs.push_back(build_job(row, line, file, defaults, profiles));
    } catch (const tandem::SimError& e) {
        plan.bad.push_back({line, fmt::format("sweep {} line {}: {}", file.string(), line, e.what())});
    }
}

SweepPlan plan_csv(const std::string& text, const fs::path& file, const RunConfig& defaults, ProfileCache& profiles) {
    SweepPlan plan;
    std::vector<std::string> header;
    std::istringstream in(text);
    std::string raw;
    int line = 0;
    while (std::getline(in, raw)) {
        ++line;
        const std::string t = trim(raw);
        if (t.empty() || t.front() == '#') continue;
        if (header.empty()) {
            std::vector<std::string> names;
            try {
                names = split_csv(t);
            } catch (const tandem::SimError& e) {
                fail(fmt::format("sweep {} line {}: header: {}", file.string(), line, e.what()));
            }
            std::set<std::string> seen;
            for (const std::string& name : names) {
                const std::string col = normalize_column(name);
                if (!known_column(col)) {
                    fail(fmt::format("sweep {} line {}: unknown column '{}' (columns: {})", file.string(), line, name,
                                     column_list()));
                }
                if (!seen.insert(col).second) {
                    fail(fmt::format("sweep {} line {}: column '{}' appears twice", file.string(), line, name));
                }
                header.push_back(col);
            }
            for (const char* req : kRequired) {
                if (!seen.count(req)) {
                    fail(fmt::format("sweep {} line {}: the header has no '{}' column (required: ranks, m, k, n)",
                                     file.string(), line, req));
                }
            }
            continue;
        }
        std::vector<std::string> fields;
        try {
            fields = split_csv(t);
        } catch (const tandem::SimError& e) {
            plan.bad.push_back({line, fmt::format("sweep {} line {}: {}", file.string(), line, e.what())});
            continue;
        }
        if (fields.size() != header.size()) {
            plan.bad.push_back({line, fmt::format("sweep {} line {}: {} fields, the header has {} columns ({})",
                                                  file.string(), line, fields.size(), header.size(),
                                                  fmt::join(header, ", "))});
            continue;
        }
        RowFields row;
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (!fields[i].empty()) row[header[i]] = fields[i];
        }
        add_row(plan, row, line, file, defaults, profiles);
    }
    if (header.empty()) fail(fmt::format("sweep {}: no header row (columns: {})", file.string(), column_list()));
    if (plan.rows() == 0) fail(fmt::format("sweep {}: no rows after the header", file.string()));
    return plan;
}

// The line on which each element of the top-level JSON array starts (the text parsed already).
std::vector<int> json_element_lines(const std::string& text) {
    std::vector<int> lines;
    int depth = 0;
    int line = 1;
    bool in_string = false;
    bool escape = false;
    bool expecting = false;  // at depth 1, the next value starts an element
    for (const char c : text) {
        if (c == '\n') ++line;
        if (in_string) {
            if (escape) escape = false;
            else if (c == '\\') escape = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) continue;
        const bool starts_value = c != ']' && c != '}' && c != ',' && c != ':';
        if (depth == 1 && expecting && starts_value) {
            lines.push_back(line);
            expecting = false;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            ++depth;
            if (depth == 1) expecting = true;
        } else if (c == ']' || c == '}') {
            --depth;
        } else if (c == ',' && depth == 1) {
            expecting = true;
        }
    }
    return lines;
}

SweepPlan plan_json(const std::string& text, const fs::path& file, const RunConfig& defaults, ProfileCache& profiles) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        fail(fmt::format("sweep {}: not valid JSON: {}", file.string(), e.what()));
    }
    if (!doc.is_array()) fail(fmt::format("sweep {}: a JSON sweep is an array of objects, one per run", file.string()));
    if (doc.empty()) fail(fmt::format("sweep {}: the array has no rows", file.string()));
    std::vector<int> lines = json_element_lines(text);
    if (lines.size() != doc.size()) {  // cannot happen for parsed JSON; number the entries then
        lines.clear();
        for (std::size_t i = 0; i < doc.size(); ++i) lines.push_back(static_cast<int>(i) + 1);
    }
    SweepPlan plan;
    for (std::size_t i = 0; i < doc.size(); ++i) {
        const int line = lines[i];
        const nlohmann::json& obj = doc[i];
        auto bad = [&](const std::string& what) {
            plan.bad.push_back({line, fmt::format("sweep {} line {}: {}", file.string(), line, what)});
        };
        if (!obj.is_object()) {
            bad(fmt::format("entry {} is not an object", i + 1));
            continue;
        }
        RowFields row;
        std::string problem;
        for (const auto& [key, value] : obj.items()) {
            const std::string col = normalize_column(key);
            if (!known_column(col)) {
                problem = fmt::format("unknown key '{}' (keys: {})", key, column_list());
                break;
            }
            if (row.count(col)) {
                problem = fmt::format("key '{}' appears twice", key);
                break;
            }
            if (value.is_null()) continue;
            if (value.is_string()) row[col] = value.get<std::string>();
            else if (value.is_boolean()) row[col] = value.get<bool>() ? "true" : "false";
            else if (value.is_number()) row[col] = value.dump();
            else {
                problem = fmt::format("{}: {} is not a number or a string", col, value.dump());
                break;
            }
        }
        if (!problem.empty()) {
            bad(problem);
            continue;
        }
        add_row(plan, row, line, file, defaults, profiles);
    }
    return plan;
}

bool looks_like_json(const std::string& text, const fs::path& file) {
    if (lower(file.extension().string()) == ".json") return true;
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string::npos && text[first] == '[';
}

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

std::string duration_text(double s) { return s < 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s); }

}  // namespace

// ---- profiles ----

std::shared_ptr<const Profile> ProfileCache::by_soc(const std::string& soc) {
    auto it = by_soc_.find(soc);
    if (it == by_soc_.end()) {
        it = by_soc_.emplace(soc, std::make_shared<const Profile>(load_profile_by_soc(soc, default_profile_dir()))).first;
    }
    return it->second;
}

std::shared_ptr<const Profile> ProfileCache::by_file(const fs::path& file) {
    std::error_code ec;
    const fs::path key_path = fs::weakly_canonical(file, ec);
    const std::string key = ec ? file.string() : key_path.string();
    auto it = by_file_.find(key);
    if (it == by_file_.end()) it = by_file_.emplace(key, std::make_shared<const Profile>(load_profile(file))).first;
    return it->second;
}

std::shared_ptr<const Profile> ProfileCache::of(const RunConfig& cfg) {
    return cfg.profile_file.empty() ? by_soc(cfg.soc) : by_file(cfg.profile_file);
}

// ---- planning ----

const std::vector<std::string>& sweep_columns() {
    static const std::vector<std::string> cols = [] {
        std::vector<std::string> c = {"ranks",       "m",          "k",           "n",       "base_m",
                                      "base_n",      "compute_blocks", "comm_blocks", "comm_mode", "profile",
                                      "timing_only", "op",         "variant",     "schedule", "dtype",
                                      "out_dtype",   "bias"};
        for (const kernels::KnobDesc& k : kernels::all_knobs()) c.push_back(k.name);
        return c;
    }();
    return cols;
}

SweepPlan plan_sweep_text(const std::string& text, const fs::path& name, const RunConfig& defaults,
                          ProfileCache& profiles) {
    // A UTF-8 byte order mark (spreadsheets write one) is not part of the first column's name.
    const std::string body = text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
    return looks_like_json(body, name) ? plan_json(body, name, defaults, profiles)
                                       : plan_csv(body, name, defaults, profiles);
}

std::string read_sweep_file(const fs::path& file) {
    if (!fs::is_regular_file(file)) fail(fmt::format("--sweep {}: no such file", file.string()));
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) fail(fmt::format("--sweep {}: cannot read the file", file.string()));
    return ss.str();
}

SweepPlan plan_sweep(const fs::path& file, const RunConfig& defaults, ProfileCache& profiles) {
    return plan_sweep_text(read_sweep_file(file), file, defaults, profiles);
}

// ---- outputs ----

nlohmann::json sweep_result_json(const SweepEntry& e) {
    nlohmann::json j = to_json(e.results);
    j["sweep_line"] = e.job.line;
    return j;
}

std::vector<std::string> sweep_csv_columns(const std::vector<SweepEntry>& entries) {
    std::vector<std::string> cols = contract_keys();
    cols.push_back("sweep_line");
    for (const char* key : {"op", "variant", "schedule", "dtype", "out_dtype", "bias", "comm_kind"}) cols.push_back(key);
    // The knobs of the ops that ran, in registry order.
    for (const kernels::KnobDesc& k : kernels::all_knobs()) {
        const bool used = std::any_of(entries.begin(), entries.end(), [&](const SweepEntry& e) {
            return e.has_results && e.results.extras.contains(k.name);
        });
        if (used) cols.push_back(k.name);
    }
    return cols;
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

void prepare_sweep_out(const std::string& prefix) {
    const fs::path parent = fs::path(prefix).parent_path();
    if (parent.empty()) return;
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (!fs::is_directory(parent)) {
        fail(fmt::format("--sweep-out {}: cannot create directory '{}'{}", prefix, parent.string(),
                         ec ? ": " + ec.message() : std::string()));
    }
}

int effective_jobs(const std::optional<int>& jobs) {
    if (jobs) return *jobs;
    return host_core_count();
}

SweepOptions sweep_options_for(const RunConfig& cli, const std::string& prefix, const char* label, std::ostream& err,
                               const std::atomic<int>* interrupts, bool err_is_tty) {
    prepare_sweep_out(prefix);
    SweepOptions opt;
    opt.jobs = effective_jobs(cli.jobs);
    opt.out_prefix = prefix;
    opt.label = label;
    opt.progress = cli.quiet ? nullptr : &err;
    opt.messages = &err;
    opt.progress_tty = err_is_tty;
    opt.interrupts = interrupts;
    return opt;
}

std::string format_sweep_table(const std::vector<SweepEntry>& entries) {
    std::string out = fmt::format("{:>6} {:>5} {:>7} {:>7} {:>7} {:>14} {:>8} {:>9}\n", "line", "ranks", "m", "k", "n",
                                  "pipelined us", "TFLOPS", "overlap %");
    for (const SweepEntry& e : entries) {
        if (!e.has_results) continue;
        const RunIdentity& id = e.results.id;
        const RunMetrics m = compute_metrics(id, e.results.times);
        out += fmt::format("{:>6} {:>5} {:>7} {:>7} {:>7} {:>14.3f} {:>8.2f} {:>9.1f}{}\n", e.job.line, id.ranks, id.m,
                           id.k, id.n, e.results.times.pipelined_us, m.tflops_per_rank, m.overlap_eff_pct,
                           e.status == SweepStatus::Failed ? "  verification FAILED" : "");
    }
    return out;
}

// ---- the pool ----

struct SweepRunner::State {
    SweepOptions opt;
    mutable std::mutex mu;
    std::condition_variable cv;
    std::vector<SweepEntry> entries;
    std::size_t next = 0;        // next entry to start
    std::size_t batch_end = 0;   // end of the current run()'s entries
    int running = 0;
    int runs_done = 0;           // ran to an end (ok or failed), over all run() calls
    int failed = 0;
    int bad = 0;
    int expected_total = 0;
    bool stop = false;           // start no new rows
    bool finalized = false;      // gave up on running rows: workers must not touch anything
    bool interrupted = false;
    int abandoned = 0;
    bool started = false;
    Clock::time_point start{};
    std::string write_error;
    std::size_t progress_width = 0;
    bool progress_open = false;
    Clock::time_point last_draw{};
    int pool_size = 0;
    int threads_per_run = 1;  // each running row's share of the host's threads

    // Over processes (opt.peers with more than one): set by run().
    bool coordinator = false;             // rank 0: hands rows out, gathers them
    bool remote_worker = false;           // another rank: runs the rows it is given
    int my_rank = 0;                      // this process's rank (0 without peers)
    std::vector<int> rows_by_process{0};  // rows finished, by rank (index 0 only without peers)
    // rank 0
    int remote_running = 0;               // rows handed out and not back yet
    std::vector<int> owner;               // by entry index: the rank it was handed to (-1: none)
    std::vector<bool> told_done;          // by rank: sent "no more rows"
    // the other ranks
    std::deque<std::size_t> assigned;     // rows given, not started
    bool no_more = false;                 // rank 0 has no more rows for us
    bool request_out = false;             // a request is waiting for its answer
    std::vector<std::size_t> outbox;      // finished rows to send to rank 0

    int interrupt_count() const { return opt.interrupts ? opt.interrupts->load(std::memory_order_relaxed) : 0; }

    // The next row this process runs, if any. Callers hold mu.
    std::optional<std::size_t> take_next() {
        if (remote_worker) {
            if (assigned.empty()) return std::nullopt;
            const std::size_t i = assigned.front();
            assigned.pop_front();
            return i;
        }
        if (next >= batch_end) return std::nullopt;
        return next++;
    }

    // A row ran to an end here or on rank `process`. Callers hold mu.
    void finish(std::size_t index, SweepEntry done, int process) {
        ++runs_done;
        ++rows_by_process[static_cast<std::size_t>(process)];
        if (done.status == SweepStatus::Failed) {
            ++failed;
            message(fmt::format("{}: {}{}", done.job.origin, done.error,
                                coordinator ? fmt::format(" (MPI rank {})", process) : std::string()));
        }
        entries[index] = std::move(done);
        write_outputs();
        show_progress();
    }

    // Rows still running anywhere. Callers hold mu.
    int running_anywhere() const { return running + remote_running; }

    // Sends and receives what is due between the processes. Callers hold mu. Throws
    // tandem::SimError for a message that makes no sense (the job is then ended by the caller).
    void pump_peers() {
        SweepPeers& peers = *opt.peers;
        if (remote_worker) {
            for (const std::size_t i : outbox) peers.send(0, kTagResult, encode_sweep_result(i, entries[i]));
            outbox.clear();
            while (std::optional<PeerMessage> m = peers.poll()) {
                if (m->from != 0 || m->tag != kTagAssign) {
                    fail(fmt::format("sweep over MPI: unexpected message (tag {}) from rank {}", m->tag, m->from));
                }
                request_out = false;
                const std::vector<std::size_t> given = decode_assign(m->bytes);
                if (given.empty()) no_more = true;
                for (const std::size_t i : given) {
                    if (i >= batch_end) fail(fmt::format("sweep over MPI: rank 0 gave row index {} of {}", i, batch_end));
                    assigned.push_back(i);
                }
                cv.notify_all();
            }
            const int free_slots = pool_size - running - static_cast<int>(assigned.size());
            if (!no_more && !request_out && free_slots > 0) {
                peers.send(0, kTagRequest, encode_request(free_slots));
                request_out = true;
            }
            return;
        }
        while (std::optional<PeerMessage> m = peers.poll()) {
            const int from = m->from;
            if (from <= 0 || from >= peers.size()) fail(fmt::format("sweep over MPI: a message from rank {}", from));
            if (m->tag == kTagRequest) {
                const int want = decode_request(m->bytes);
                std::vector<std::size_t> given;
                while (!stop && interrupt_count() == 0 && static_cast<int>(given.size()) < want && next < batch_end) {
                    owner[next] = from;
                    given.push_back(next++);
                }
                remote_running += static_cast<int>(given.size());
                if (given.empty()) told_done[static_cast<std::size_t>(from)] = true;
                peers.send(from, kTagAssign, encode_assign(given));
            } else if (m->tag == kTagResult) {
                DecodedResult d = decode_sweep_result(m->bytes);
                if (d.index >= entries.size() || owner[d.index] != from) {
                    fail(fmt::format("sweep over MPI: rank {} sent row index {}, which it was not given", from, d.index));
                }
                owner[d.index] = -1;
                --remote_running;
                d.entry.job = entries[d.index].job;
                finish(d.index, std::move(d.entry), from);
            } else {
                fail(fmt::format("sweep over MPI: unexpected message (tag {}) from rank {}", m->tag, from));
            }
        }
    }

    // Every other rank has been told there are no more rows. Callers hold mu.
    bool all_told_done() const { return std::all_of(told_done.begin() + 1, told_done.end(), [](bool b) { return b; }); }

    double elapsed() const { return started ? std::chrono::duration<double>(Clock::now() - start).count() : 0.0; }

    // Callers hold mu.
    std::string progress_text() const {
        const int total = expected_total > 0 ? expected_total : bad + static_cast<int>(entries.size());
        const int done = bad + runs_done;
        const double el = elapsed();
        std::string text = fmt::format("{}: {}/{} done, {} bad", opt.label, done, total, bad);
        if (failed > 0) text += fmt::format(", {} failed", failed);
        text += fmt::format(", elapsed {:.1f} s", el);
        const int remaining = total - done;
        if (remaining > 0 && !stop) {
            text += runs_done > 0 ? fmt::format(", about {} left", duration_text(el / runs_done * remaining))
                                  : std::string(", estimating time left");
        }
        return text;
    }

    void show_progress() {
        if (!opt.progress) return;
        const std::string text = progress_text();
        last_draw = Clock::now();
        if (opt.progress_tty) {
            *opt.progress << '\r' << text << std::string(progress_width > text.size() ? progress_width - text.size() : 0, ' ');
            progress_width = text.size();
            progress_open = true;
        } else {
            *opt.progress << text << '\n';
        }
        opt.progress->flush();
    }

    // A message line; on a terminal the progress line is cleared first and redrawn after.
    void message(const std::string& line) {
        if (!opt.messages) return;
        const bool redraw = opt.progress_tty && progress_open && opt.progress == opt.messages;
        if (redraw) *opt.messages << '\r' << std::string(progress_width, ' ') << '\r';
        *opt.messages << line << '\n';
        opt.messages->flush();
        if (redraw) {
            progress_width = 0;
            show_progress();
        }
    }

    void end_progress() {
        if (opt.progress && opt.progress_tty && progress_open) {
            *opt.progress << '\n';
            opt.progress->flush();
        }
        progress_open = false;
    }

    void write_outputs() {
        if (opt.out_prefix.empty() || !write_error.empty()) return;
        try {
            const std::string csv = sweep_csv(entries);
            write_file_atomic(opt.out_prefix + ".csv", std::as_bytes(std::span<const char>(csv.data(), csv.size())));
            write_json_atomic(opt.out_prefix + ".json", sweep_json(entries));
        } catch (const std::exception& e) {
            write_error = e.what();
            stop = true;
        }
    }
};

namespace {

SweepEntry run_job(const SweepJob& job) {
    SweepEntry e;
    e.job = job;
    try {
        ProgramOutput out = run_program(job.cfg, *job.profile);
        e.results = std::move(out.results);
        e.has_results = true;
        if (job.cfg.sanitize && out.bench.sanitizer_total > 0) {
            // --sanitize: a row whose run broke a synchronisation rule fails, naming the first
            // violation (the whole report is what a single run with --sanitize prints).
            const std::string& first = out.bench.sanitizer_violations.front().text;
            e.status = SweepStatus::Failed;
            e.error = fmt::format("--sanitize found {} violation{}, the first: {}", out.bench.sanitizer_total,
                                  out.bench.sanitizer_total == 1 ? "" : "s", first.substr(0, first.find('\n')));
        } else if (e.results.verification == Verification::Failed) {
            e.status = SweepStatus::Failed;
            e.error = "verification FAILED";
        } else {
            e.status = SweepStatus::Ok;
        }
    } catch (const std::exception& ex) {
        e.status = SweepStatus::Failed;
        e.error = ex.what();
    }
    return e;
}

void worker_loop(const std::shared_ptr<SweepRunner::State>& s) {
    for (;;) {
        std::size_t index = 0;
        SweepJob job;
        {
            std::unique_lock lock(s->mu);
            for (;;) {
                if (s->stop || s->finalized || s->interrupt_count() > 0) return;
                if (const std::optional<std::size_t> i = s->take_next()) {
                    index = *i;
                    break;
                }
                // Another rank's pool waits for rows from rank 0 until it has no more.
                if (!s->remote_worker || s->no_more) return;
                s->cv.wait(lock);
            }
            job = s->entries[index].job;
            job.cfg.host_threads = s->threads_per_run;
            ++s->running;
        }
        SweepEntry done = run_job(job);
        std::lock_guard lock(s->mu);
        if (s->finalized) return;  // abandoned: the process is ending without us
        --s->running;
        s->finish(index, std::move(done), s->my_rank);
        if (s->remote_worker) s->outbox.push_back(index);
        s->cv.notify_all();
    }
}

}  // namespace

SweepRunner::SweepRunner(SweepOptions options) : state_(std::make_shared<State>()) { state_->opt = std::move(options); }

SweepRunner::~SweepRunner() { finish_progress(); }

void SweepRunner::set_bad_rows(int bad) {
    std::lock_guard lock(state_->mu);
    state_->bad = bad;
}

void SweepRunner::set_expected_total(int total) {
    std::lock_guard lock(state_->mu);
    state_->expected_total = total;
}

void SweepRunner::run(std::vector<SweepJob> jobs) {
    const std::shared_ptr<State> s = state_;
    std::unique_lock lock(s->mu);
    if (!s->started) {
        s->started = true;
        s->start = Clock::now();
    }
    if (s->finalized) return;
    const std::size_t first = s->entries.size();
    for (SweepJob& job : jobs) {
        SweepEntry e;
        e.job = std::move(job);
        s->entries.push_back(std::move(e));
    }
    s->next = first;
    s->batch_end = s->entries.size();
    const bool spread = s->opt.peers != nullptr && s->opt.peers->size() > 1;
    if (spread) {
        // Each run() is one batch of the hand-out protocol (--tune runs two: its stages); every
        // process calls run() with the same jobs, and a batch starts only after the previous one
        // ended everywhere (the caller synchronises, see run_tune), so no message of the
        // previous batch is still on its way.
        const auto processes = static_cast<std::size_t>(s->opt.peers->size());
        s->coordinator = s->opt.peers->rank() == 0;
        s->remote_worker = !s->coordinator;
        s->my_rank = s->opt.peers->rank();
        if (s->rows_by_process.size() != processes) s->rows_by_process.assign(processes, 0);
        s->owner.assign(s->entries.size(), -1);
        s->told_done.assign(processes, false);
        s->assigned.clear();
        s->no_more = false;
        s->request_out = false;
    }
    s->write_outputs();  // the files exist (with what is done so far) from the start
    if (s->opt.progress_tty) s->show_progress();
    const int pool = std::max(1, std::min<int>(s->opt.jobs > 0 ? s->opt.jobs : effective_jobs(std::nullopt),
                                               static_cast<int>(s->batch_end - first)));
    s->pool_size = pool;
    // The host's threads are shared by the rows running at once: --jobs J runs J machines of
    // about cores / J threads each, not J machines of every core.
    s->threads_per_run = thread_share(host_core_count(), pool);
    std::vector<std::thread> workers;
    if (!s->stop && s->interrupt_count() == 0) {
        for (int i = 0; i < pool; ++i) workers.emplace_back(worker_loop, s);
    }
    Clock::time_point interrupted_at{};
    std::string peer_error;
    for (;;) {
        if (spread) {
            try {
                s->pump_peers();
            } catch (const std::exception& e) {
                // The job cannot go on (the caller ends it): leave the running rows.
                peer_error = e.what();
                s->finalized = true;
                break;
            }
        }
        const int interrupts = s->interrupt_count();
        if (interrupts > 0 && !s->interrupted) {
            s->interrupted = true;
            s->stop = true;
            interrupted_at = Clock::now();
            if (s->running_anywhere() > 0) {
                s->message(fmt::format("{}: interrupted: starting no new runs; waiting up to {:.0f} s for the {} "
                                       "running (Ctrl-C again to abandon them)",
                                       s->opt.label, s->opt.interrupt_grace_s, s->running_anywhere()));
            }
        }
        if (s->remote_worker) {
            if (s->running == 0 && s->outbox.empty() && s->no_more && s->assigned.empty()) break;
        } else if (s->running_anywhere() == 0 && (s->stop || s->next >= s->batch_end) &&
                   (!s->coordinator || s->all_told_done())) {
            break;
        }
        if (s->interrupted && s->running_anywhere() > 0 &&
            (interrupts >= 2 ||
             std::chrono::duration<double>(Clock::now() - interrupted_at).count() >= s->opt.interrupt_grace_s)) {
            s->finalized = true;
            s->abandoned = s->running_anywhere();
            break;
        }
        // On a terminal the elapsed time ticks while long rows run.
        if (s->opt.progress_tty && Clock::now() - s->last_draw >= std::chrono::seconds(1)) s->show_progress();
        // Over processes, messages arrive without a notify: poll them often (a probe is cheap).
        s->cv.wait_for(lock, std::chrono::milliseconds(spread ? 2 : 50));
    }
    s->write_outputs();
    if (s->opt.progress_tty) s->show_progress();
    const bool abandon = s->finalized;
    const std::string write_error = s->write_error;
    s->cv.notify_all();  // pool threads waiting for rows: there are none to come
    lock.unlock();
    for (std::thread& t : workers) {
        if (abandon) t.detach();  // still simulating; they hold `s` and touch nothing once finalized
        else t.join();
    }
    if (!peer_error.empty()) fail(peer_error);
    if (!write_error.empty()) fail(fmt::format("{}: {}", s->opt.label, write_error));
}

std::vector<SweepEntry> SweepRunner::entries() const {
    std::lock_guard lock(state_->mu);
    return state_->entries;
}

bool SweepRunner::interrupted() const {
    std::lock_guard lock(state_->mu);
    return state_->interrupted;
}

int SweepRunner::abandoned() const {
    std::lock_guard lock(state_->mu);
    return state_->abandoned;
}

int SweepRunner::failed() const {
    std::lock_guard lock(state_->mu);
    return state_->failed;
}

std::vector<int> SweepRunner::rows_per_process() const {
    std::lock_guard lock(state_->mu);
    return state_->rows_by_process;
}

double SweepRunner::elapsed_seconds() const {
    std::lock_guard lock(state_->mu);
    return state_->elapsed();
}

void SweepRunner::finish_progress() {
    std::lock_guard lock(state_->mu);
    state_->end_progress();
}

// ---- the command ----

namespace {

// Another rank of a sweep over MPI: plan what rank 0 broadcast, run the rows it hands out.
CommandOutcome run_sweep_rows_for_rank0(const RunConfig& cli, std::ostream& err, SweepPeers& peers) {
    const SweepStart start = decode_sweep_start(peers.broadcast(std::string()));
    if (!start.ok) return CommandOutcome{2, false};  // rank 0 reports why
    try {
        ProfileCache profiles;
        profiles.of(cli);
        const SweepPlan plan = plan_sweep_text(start.text, cli.sweep_file, cli, profiles);
        if (job_lines(plan) != start.lines) {
            std::string why = "the rows that are good differ";
            if (!plan.bad.empty()) why = plan.bad.front().message;
            fail(fmt::format("the sweep plans differently here than on rank 0 (a profile file missing on this host?): {}",
                             why));
        }
        SweepOptions opt;
        opt.jobs = effective_jobs(cli.jobs);
        opt.label = "sweep";
        opt.peers = &peers;
        SweepRunner runner(opt);
        runner.run(plan.jobs);
    } catch (const std::exception& e) {
        err << fmt::format("[ERROR] sweep over MPI, rank {} of {}: {}\n", peers.rank(), peers.size(), e.what());
        err.flush();
        peers.abort(2);
    }
    return CommandOutcome{};
}

}  // namespace

CommandOutcome run_sweep_command(const RunConfig& cli, std::ostream& out, std::ostream& err,
                                 const std::atomic<int>* interrupts, bool err_is_tty, SweepPeers* peers) {
    if (peers != nullptr && peers->size() <= 1) peers = nullptr;
    if (peers != nullptr && peers->rank() != 0) return run_sweep_rows_for_rank0(cli, err, *peers);
    ProfileCache profiles;
    SweepPlan plan;
    std::string text;
    const std::string prefix = cli.sweep_out.empty() ? std::string("out/sweep") : cli.sweep_out;
    try {
        profiles.of(cli);  // a bad -v/--profile is a command-line error, not one bad row per row
        text = read_sweep_file(cli.sweep_file);
        plan = plan_sweep_text(text, cli.sweep_file, cli, profiles);
        // Over MPI, everything that can refuse the sweep happens before the others start.
        if (peers != nullptr) prepare_sweep_out(prefix);
    } catch (...) {
        if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{}));  // the others end quietly
        throw;
    }
    if (peers != nullptr) peers->broadcast(encode_sweep_start(SweepStart{true, text, job_lines(plan)}));
    for (const SweepRowError& b : plan.bad) err << b.message << '\n';
    if (peers != nullptr && !cli.quiet) {
        err << fmt::format("sweep: {} rows over {} MPI processes (rank 0 hands them out and writes the results)\n",
                           plan.jobs.size(), peers->size());
    }
    err.flush();
    SweepOptions options = sweep_options_for(cli, prefix, "sweep", err, interrupts, err_is_tty);
    options.peers = peers;
    SweepRunner runner(options);
    runner.set_bad_rows(static_cast<int>(plan.bad.size()));
    runner.set_expected_total(plan.rows());
    try {
        runner.run(plan.jobs);
    } catch (const std::exception& e) {
        if (peers == nullptr) throw;
        // The other ranks wait for rows: end the job rather than leave them waiting.
        runner.finish_progress();
        err << fmt::format("[ERROR] sweep over MPI, rank 0 of {}: {}\n", peers->size(), e.what());
        err.flush();
        peers->abort(2);
    }
    runner.finish_progress();

    const std::vector<SweepEntry> entries = runner.entries();
    const int ran = static_cast<int>(std::count_if(entries.begin(), entries.end(),
                                                   [](const SweepEntry& e) { return e.has_results; }));
    if (!cli.quiet && ran > 0) out << format_sweep_table(entries);
    CommandOutcome outcome;
    if (runner.interrupted()) {
        err << fmt::format("sweep: interrupted: {} of {} rows saved in {}.csv and {}.json{}\n", ran, plan.rows(), prefix,
                           prefix,
                           runner.abandoned() > 0 ? fmt::format(" ({} running rows abandoned)", runner.abandoned())
                                                  : std::string());
        outcome.exit_code = 130;
        outcome.abandoned_runs = runner.abandoned() > 0;
        return outcome;
    }
    const std::string over = peers == nullptr ? std::string()
                                              : fmt::format(" over {} MPI processes (rows by rank: {})", peers->size(),
                                                            fmt::join(runner.rows_per_process(), " "));
    out << fmt::format("sweep: {} of {} rows ran ({} bad, {} failed) in {:.1f} s{}; results: {}.csv, {}.json\n", ran,
                       plan.rows(), plan.bad.size(), runner.failed(), runner.elapsed_seconds(), over, prefix, prefix);
    outcome.exit_code = plan.bad.empty() && runner.failed() == 0 ? 0 : 1;
    return outcome;
}

}  // namespace tandem::host
