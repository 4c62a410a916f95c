#pragma once
// A sweep file's rows as text, before they are runs (host/batch/sweep_plan.hpp makes runs of
// them): a CSV with a header row, or a JSON array of objects (JSON when the file ends in .json or
// its first non-blank character is '['). A column is a parameter's sweep column (host/params/
// param_schema.hpp) or an op's knob; names are case-insensitive and '-' is read as '_' (`base-m`
// is `base_m`). An empty cell, or a JSON null, leaves its parameter unset.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tandem::host {

// The columns a sweep row may have: the schema's sweep columns, then every knob's name.
const std::vector<std::string>& sweep_columns();

// The columns every row must give.
const std::vector<std::string>& required_sweep_columns();  // ranks, m, k, n

using RowFields = std::map<std::string, std::string>;  // a row's values by column (normalized)

struct SweepRow {
    int line = 0;  // where the row starts in the file
    RowFields fields;
};

struct SweepRowError {
    int line = 0;
    std::string message;  // the whole line: "sweep FILE line N: <what>"
};

struct SweepRows {
    std::vector<SweepRow> rows;       // in input order
    std::vector<SweepRowError> bad;   // rows that cannot be read, in input order
    // What SweepRow::line counts: "line", or "entry" for a JSON sweep whose entries share lines
    // (written on one line): they are numbered from 1 instead.
    const char* where = "line";
};

// Reads `text` (the file `file`'s; its name is used in messages). A UTF-8 byte order mark is
// skipped. Throws tandem::SimError for a file that cannot be used at all: not CSV or JSON, a
// header with an unknown or repeated column or without a required one, no rows.
SweepRows read_sweep_rows(const std::string& text, const std::filesystem::path& file);

}  // namespace tandem::host
