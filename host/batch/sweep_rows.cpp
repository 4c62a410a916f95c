// Sweep files as rows of text. See sweep_rows.hpp.
#include "host/batch/sweep_rows.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// Column names are case-insensitive and '-' means '_'.
std::string normalize_column(const std::string& name) {
    std::string s = lower_case(trim(name));
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
}

bool known_column(const std::string& name) {
    const auto& cols = sweep_columns();
    return std::find(cols.begin(), cols.end(), name) != cols.end();
}

std::string column_list() { return fmt::format("{}", fmt::join(sweep_columns(), ", ")); }

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

// The header's columns (normalized); throws for an unusable header.
std::vector<std::string> read_header(const std::string& t, int line, const fs::path& file) {
    std::vector<std::string> names;
    try {
        names = split_csv(t);
    } catch (const tandem::SimError& e) {
        fail(fmt::format("sweep {} line {}: header: {}", file.string(), line, e.what()));
    }
    std::vector<std::string> header;
    std::set<std::string> seen;
    for (const std::string& name : names) {
        const std::string col = normalize_column(name);
        if (!known_column(col)) {
            fail(fmt::format("sweep {} line {}: unknown column '{}' (columns: {})", file.string(), line, name,
                             column_list()));
        }
        if (!seen.insert(col).second) fail(fmt::format("sweep {} line {}: column '{}' appears twice", file.string(), line, name));
        header.push_back(col);
    }
    for (const std::string& req : required_sweep_columns()) {
        if (!seen.count(req)) {
            fail(fmt::format("sweep {} line {}: the header has no '{}' column (required: {})", file.string(), line, req,
                             fmt::join(required_sweep_columns(), ", ")));
        }
    }
    return header;
}

SweepRows read_csv(const std::string& text, const fs::path& file) {
    SweepRows out;
    std::vector<std::string> header;
    std::istringstream in(text);
    std::string raw;
    int line = 0;
    auto bad = [&](const std::string& what) {
        out.bad.push_back({line, fmt::format("sweep {} line {}: {}", file.string(), line, what)});
    };
    while (std::getline(in, raw)) {
        ++line;
        const std::string t = trim(raw);
        if (t.empty() || t.front() == '#') continue;
        if (header.empty()) {
            header = read_header(t, line, file);
            continue;
        }
        std::vector<std::string> fields;
        try {
            fields = split_csv(t);
        } catch (const tandem::SimError& e) {
            bad(e.what());
            continue;
        }
        if (fields.size() != header.size()) {
            bad(fmt::format("{} fields, the header has {} columns ({})", fields.size(), header.size(), fmt::join(header, ", ")));
            continue;
        }
        SweepRow row{line, {}};
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (!fields[i].empty()) row.fields[header[i]] = fields[i];
        }
        out.rows.push_back(std::move(row));
    }
    if (header.empty()) fail(fmt::format("sweep {}: no header row (columns: {})", file.string(), column_list()));
    if (out.rows.empty() && out.bad.empty()) fail(fmt::format("sweep {}: no rows after the header", file.string()));
    return out;
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

// One JSON row's fields; the problem with it, if any, in `problem`.
RowFields json_row(const nlohmann::json& obj, std::string& problem) {
    RowFields row;
    for (const auto& [key, value] : obj.items()) {
        const std::string col = normalize_column(key);
        if (!known_column(col)) {
            problem = fmt::format("unknown key '{}' (keys: {})", key, column_list());
            return row;
        }
        if (row.count(col)) {
            problem = fmt::format("key '{}' appears twice", key);
            return row;
        }
        if (value.is_null()) continue;
        if (value.is_string()) row[col] = value.get<std::string>();
        else if (value.is_boolean()) row[col] = value.get<bool>() ? "true" : "false";
        else if (value.is_number()) row[col] = value.dump();
        else {
            problem = fmt::format("{}: {} is not a number or a string", col, value.dump());
            return row;
        }
    }
    return row;
}

SweepRows read_json(const std::string& text, const fs::path& file) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        fail(fmt::format("sweep {}: not valid JSON: {}", file.string(), e.what()));
    }
    if (!doc.is_array()) fail(fmt::format("sweep {}: a JSON sweep is an array of objects, one per run", file.string()));
    if (doc.empty()) fail(fmt::format("sweep {}: the array has no rows", file.string()));
    std::vector<int> lines = json_element_lines(text);
    // Entries that share a line (a sweep written on one line) cannot be told apart by it: they
    // are numbered instead (docs/SWEEPS.md, sweep_line).
    const bool by_entry = lines.size() != doc.size() || std::adjacent_find(lines.begin(), lines.end()) != lines.end();
    if (by_entry) {
        lines.clear();
        for (std::size_t i = 0; i < doc.size(); ++i) lines.push_back(static_cast<int>(i) + 1);
    }
    SweepRows out;
    out.where = by_entry ? "entry" : "line";
    const char* where = out.where;
    for (std::size_t i = 0; i < doc.size(); ++i) {
        const int line = lines[i];
        std::string problem = doc[i].is_object() ? std::string() : fmt::format("entry {} is not an object", i + 1);
        RowFields row = problem.empty() ? json_row(doc[i], problem) : RowFields{};
        if (!problem.empty()) {
            out.bad.push_back({line, fmt::format("sweep {} {} {}: {}", file.string(), where, line, problem)});
            continue;
        }
        out.rows.push_back({line, std::move(row)});
    }
    return out;
}

bool looks_like_json(const std::string& text, const fs::path& file) {
    if (lower_case(file.extension().string()) == ".json") return true;
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string::npos && text[first] == '[';
}

}  // namespace

const std::vector<std::string>& sweep_columns() {
    static const std::vector<std::string> cols = [] {
        std::vector<std::string> c;
        for (const ParamDesc& p : param_schema()) {
            if (!p.sweep_column.empty()) c.push_back(p.sweep_column);
        }
        for (const kernels::KnobDesc& k : kernels::all_knobs()) c.push_back(k.name);
        return c;
    }();
    return cols;
}

const std::vector<std::string>& required_sweep_columns() {
    static const std::vector<std::string> cols = {param_desc(Param::Ranks).sweep_column, param_desc(Param::M).sweep_column,
                                                  param_desc(Param::K).sweep_column, param_desc(Param::N).sweep_column};
    return cols;
}

SweepRows read_sweep_rows(const std::string& text, const fs::path& file) {
    // A UTF-8 byte order mark (spreadsheets write one) is not part of the first column's name.
    const std::string body = text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
    return looks_like_json(body, file) ? read_json(body, file) : read_csv(body, file);
}

}  // namespace tandem::host
