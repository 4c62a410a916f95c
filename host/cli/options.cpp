// The command line, built from the parameter schema. See options.hpp.
#include "host/cli/options.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

#include "host/io/atomic_file.hpp"
#include "host/params/param_schema.hpp"
#include "host/params/param_values.hpp"
#include "host/params/param_words.hpp"
#include "kernels/registry.hpp"
#include "sim/sim_error.hpp"
#include "sim/trace/chrome_trace.hpp"
#include "host/params/fail.hpp"

namespace tandem::host {
namespace {

// The text of every option given, by parameter (flags: "true"), and of every knob.
struct ParseTargets {
    std::map<Param, std::string> texts;
    std::map<Param, bool> flags;
    std::map<std::string, std::string> knobs;
};

// A CLI11 check made of one of the schema's parsers: its message is the parser's (CLI11 adds the
// flag: "--gm: 'abc' is not a whole decimal number"). Decimal numbers are normalized ("0100" is
// 100, not octal as CLI11's own conversion would read it).
CLI::Validator schema_check(const ParamDesc* p) {
    return CLI::Validator(
        [p](std::string& text) -> std::string {
            try {
                if (p == nullptr || p->type == ParamType::Int) text = std::to_string(parse_int_text(text));
                else if (p->id == Param::Dtype || p->id == Param::OutDtype) text = dtype_name(parse_dtype_text(text));
                else if (p->type == ParamType::Choice) text = parse_choice_text(*p, text);
            } catch (const tandem::SimError& e) {
                return e.what();
            }
            return {};
        },
        "", "schema");
}

// A knob's text: an integer, or one of its words (kept as written, parsed again once read).
CLI::Validator knob_check(const std::string& knob) {
    return CLI::Validator(
        [knob](std::string& text) -> std::string {
            try {
                (void)parse_knob_text(knob, text);
            } catch (const tandem::SimError& e) {
                return e.what();
            }
            return {};
        },
        "", "knob");
}

// A CLI11 file/directory check without its ":FILE"/":DIR" suffix in the help (the type name says it).
CLI::Validator without_description(CLI::Validator v) { return v.description(""); }

std::string joined_names(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
}

void add_param(CLI::App& app, const ParamDesc& p, ParseTargets& t) {
    const std::string names = joined_names(cli_names(p));
    if (p.id == Param::Help) {
        app.set_help_flag(names, p.help);
        return;
    }
    if (p.type == ParamType::Flag) {
        app.add_flag(names, t.flags[p.id], p.help);
        return;
    }
    CLI::Option* o = app.add_option(names, t.texts[p.id], p.help)->type_name(p.cli_type_name);
    if (!p.default_text.empty()) o->default_str(p.default_text);
    if (p.type == ParamType::Int || p.type == ParamType::Choice) o->transform(schema_check(&p));
    // What must exist before anything runs (outputs are checked once the run is known).
    if (p.id == Param::ProfileFile) o->check(without_description(CLI::ExistingFile));
    if (p.id == Param::InputDir) o->check(without_description(CLI::ExistingDirectory));
}

std::string description() {
    std::vector<std::string> ops;
    for (const kernels::OpDesc* op : kernels::registered_ops()) ops.push_back(op->name);
    return fmt::format(
        "Tandem: fused communication + compute ops on a simulated Ascend NPU cluster. Runs an op's three\n"
        "views (compute-only, sequential, pipelined), verifies its output against an OpenBLAS golden and\n"
        "prints a summary (the seed's format for the seed's op). Times are simulated microseconds.\n"
        "Ops: {} (the first runs without --op: the pto-isa seed's AllGather+GEMM); --list-ops\n"
        "describes them. run.sh passes its flags here.",
        fmt::join(ops, ", "));
}

void build_app(CLI::App& app, ParseTargets& t, const std::string& program_name) {
    app.name(program_name);
    app.description(description());
    app.get_formatter()->column_width(34);
    for (const ParamDesc& p : param_schema()) {
        if (!p.cli_flag.empty()) add_param(app, p, t);
    }
    // The ops' knobs: one flag each (--chunk-tiles), with the aliases the op gives it.
    for (const kernels::KnobDesc& knob : kernels::all_knobs()) {
        std::vector<std::string> names = {knob_flag(knob.name)};
        names.insert(names.end(), knob.aliases.begin(), knob.aliases.end());
        app.add_option(joined_names(names), t.knobs[knob.name], knob.doc)
            ->transform(knob_check(knob.name))
            ->type_name(knob.parse_words ? "INT|WORD" : "INT");
    }
    app.footer(
        "Examples:\n"
        "  -r sim -v Ascend910B1 -n 2 --gm 2048 --gk 2048 --gn 1024\n"
        "  -r sim -v Ascend910B1 -n 8 --gm 16384 --gk 4096 --gn 4096 --timing-only --json r.json\n"
        "  --op matmul_all_reduce --variant one_shot -n 4 --sanitize\n"
        "  --sweep rows.csv --sweep-out out/sweep --jobs 2\n"
        "  -n 8 --gm 16384 --gk 4096 --gn 4096 --tune\n"
        "  diff a.json b.json                 which figures of two results JSONs moved (diff --help)\n"
        "Exit codes: 0 done, 1 verification failed, 2 error, 4 --sanitize found a violation.");
}

// --sweep and --tune run many configurations: flags that belong to one run are refused with them.
void check_batch_flags(const CLI::App& app, const BatchOptions& b) {
    const bool sweep = !b.sweep_file.empty();
    if (sweep && b.tune) fail("--sweep with --tune: --tune searches one shape, --sweep runs a file's rows; use one");
    if (!b.any()) {
        for (const char* flag : {"--sweep-out", "--jobs"}) {
            if (app.count(flag) > 0) fail(fmt::format("{} applies to --sweep and --tune only", flag));
        }
        return;
    }
    const char* mode = sweep ? "--sweep" : "--tune";
    for (const char* flag : {"--json", "--trace", "--trace-ranks", "--trace-window-us", "--write-inputs", "--input-dir"}) {
        if (app.count(flag) > 0) {
            fail(fmt::format("{} with {}: {} applies to a single run; the results go to --sweep-out PREFIX.csv and "
                             "PREFIX.json",
                             flag, mode, flag));
        }
    }
    if (sweep) {
        for (const Param p : {Param::Ranks, Param::M, Param::K, Param::N}) {
            if (app.count(param_desc(p).cli_flag) > 0) {
                fail(fmt::format("{} with --sweep: each row gives its shape (columns ranks, m, k, n)",
                                 param_name_in(param_desc(p).name, Dialect::Cli)));
            }
        }
    }
    const IntRange jobs = *param_desc(Param::Jobs).range;
    if (b.jobs && (*b.jobs < jobs.lo || *b.jobs > jobs.hi)) {
        fail(fmt::format("--jobs {}: must be in {}..{}; nearest valid: {}", *b.jobs, jobs.lo, jobs.hi,
                         std::clamp(*b.jobs, jobs.lo, jobs.hi)));
    }
}

// A program parameter given on the command line, into the CommandLine.
void set_program_param(CommandLine& cl, Param p, const std::string& text, bool on) {
    // A path flag given an empty name ("--json ''") would silently write nothing.
    if (param_desc(p).type == ParamType::Path && text.empty()) {
        fail(fmt::format("{}: an empty name; give a path", param_desc(p).cli_flag));
    }
    switch (p) {
        case Param::ListOps: cl.list_ops = on; return;
        case Param::Json: cl.json_file = text; return;
        case Param::Trace: cl.outputs.trace_file = text; return;
        case Param::TraceRanks:
            cl.outputs.trace_default_ranks = false;
            if (text == "all") return;  // every rank: no list
            try {
                cl.outputs.trace_ranks = tandem::parse_rank_list(text);
            } catch (const tandem::SimError& e) {
                fail(fmt::format("--trace-ranks {}: {}", text, e.what()));
            }
            return;
        case Param::TraceWindowUs:
            try {
                cl.outputs.trace_window_us = tandem::parse_window_us(text);
            } catch (const tandem::SimError& e) {
                fail(fmt::format("--trace-window-us {}: {}", text, e.what()));
            }
            return;
        case Param::OutDir: cl.outputs.out_dir = text; return;
        case Param::WriteInputs: cl.outputs.write_inputs = on; return;
        case Param::InputDir: cl.outputs.input_dir = text; return;
        case Param::Quiet: cl.quiet = on; cl.batch.quiet = on; return;
        case Param::Sweep: cl.batch.sweep_file = text; return;
        case Param::Tune: cl.batch.tune = on; return;
        case Param::SweepOut: cl.batch.out_prefix = text; return;
        case Param::Jobs: cl.batch.jobs = parse_int_text(text); return;
        case Param::RunMode:
            if (text == "npu") {
                fail("-r npu: no Ascend NPU is present on this machine; Tandem simulates one: use -r sim");
            }
            return;
        case Param::Help: return;
        default: throw std::logic_error(fmt::format("set_program_param: '{}' is not a program parameter", param_desc(p).name));
    }
}

// A variant built for one shape (gemm pto_performance: 6144^3) runs it when none is given.
void apply_default_shape(const CLI::App& app, RunRequest& r) {
    try {
        const kernels::VariantDesc& v = variant_of(r);
        if (!v.default_shape) return;
        if (app.count(param_desc(Param::M).cli_flag) == 0) r.m = (*v.default_shape)[0];
        if (app.count(param_desc(Param::K).cli_flag) == 0) r.k = (*v.default_shape)[1];
        if (app.count(param_desc(Param::N).cli_flag) == 0) r.n = (*v.default_shape)[2];
    } catch (const tandem::SimError&) {
        // An unknown op or variant: resolving the run names it.
    }
}

// Output files are written at the end of a possibly long run: refuse now a path they cannot take.
void check_output_file(const char* flag, const std::string& file) {
    if (file.empty()) return;
    const std::filesystem::path path(file);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(fmt::format("{} {}: is a directory; give a file name", flag, file));
    // A device or a FIFO (--json /dev/stdout) is written in place (sim/output_file.hpp).
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) return;
    const std::filesystem::path parent = path.parent_path();
    if (std::filesystem::exists(parent, ec) && !std::filesystem::is_directory(parent, ec)) {
        fail(fmt::format("{} {}: '{}' is not a directory; choose another path", flag, file, parent.string()));
    }
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
        fail(fmt::format("{} {}: directory '{}' does not exist; create it or choose another path", flag, file,
                         parent.string()));
    }
    if (const std::string why = cannot_create_in(parent); !why.empty()) {
        fail(fmt::format("{} {}: cannot write in '{}' ({}); choose another path", flag, file,
                         parent.empty() ? "." : parent.string(), why));
    }
}

// The output matrices' directory is created at the end of the run if missing: refuse now one that
// cannot be (an empty name, or a path through a file).
void check_out_dir(const std::string& dir) {
    if (dir.empty()) fail("--out-dir: an empty name; give a directory");
    std::error_code ec;
    for (std::filesystem::path p(dir); !p.empty(); p = p.parent_path()) {
        if (std::filesystem::exists(p, ec)) {
            if (!std::filesystem::is_directory(p, ec)) {
                fail(fmt::format("--out-dir {}: '{}' exists and is not a directory; choose another path", dir, p.string()));
            }
            break;
        }
        if (p == p.parent_path()) break;
    }
    if (const std::string why = cannot_create_in(dir); !why.empty())
        fail(fmt::format("--out-dir {}: cannot write there ({}); choose another directory", dir, why));
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
    CLI::App app;
    ParseTargets t;
    const std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "tandem";
    build_app(app, t, program);
    app.parse(argc, argv);
    CommandLine cl;
    cl.outputs.trace_default_ranks = true;  // a trace a user can open: rank 0 and the slowest (RunOutputs)
    for (const ParamDesc& p : param_schema()) {
        if (p.cli_flag.empty() || p.id == Param::Help || app.count(p.cli_flag) == 0) continue;
        const bool on = p.type == ParamType::Flag && t.flags[p.id];
        const std::string text = p.type == ParamType::Flag ? (on ? "true" : "false") : t.texts[p.id];
        if (p.scope == ParamScope::Run) set_param(cl.run, p.id, text);
        else set_program_param(cl, p.id, text, on);
    }
    for (const auto& [name, text] : t.knobs) {
        if (app.count(knob_flag(name)) > 0)
            for (const auto& [knob, value] : parse_knob_text(name, text)) cl.run.knobs[knob] = value;
    }
    check_batch_flags(app, cl.batch);
    apply_default_shape(app, cl.run);
    return cl;
}

void check_program_options(const CommandLine& cl, const ResolvedRun& run) {
    const RunOutputs& o = cl.outputs;
    const bool timing_only = run.request.timing_only;
    if (timing_only && !o.input_dir.empty()) {
        fail(fmt::format("--input-dir {} with --timing-only: a timing-only run reads no data; drop one of the two",
                         o.input_dir));
    }
    if (timing_only && o.write_inputs) {
        fail("--write-inputs with --timing-only: a timing-only run has no data to write; drop one of the two");
    }
    const bool seed_files = run.op->seed_format && run.op->seed_format->input_files;
    if (!seed_files && (o.write_inputs || !o.input_dir.empty())) {
        fail(fmt::format("{}: the seed's input files are its op's; op {} generates its inputs",
                         o.write_inputs ? "--write-inputs" : "--input-dir", run.op->name));
    }
    if (!timing_only) check_out_dir(o.out_dir);
    check_output_file("--json", cl.json_file);
    check_output_file("--trace", o.trace_file);
    std::error_code ec_json, ec_trace;
    if (!cl.json_file.empty() && !o.trace_file.empty() &&
        std::filesystem::weakly_canonical(cl.json_file, ec_json) == std::filesystem::weakly_canonical(o.trace_file, ec_trace) &&
        !ec_json && !ec_trace) {
        fail(fmt::format("--json {} and --trace {}: the same file; give each its own", cl.json_file, o.trace_file));
    }
    if (o.trace_file.empty() && (!o.trace_ranks.empty() || o.trace_window_us)) {
        fail("--trace-ranks/--trace-window-us limit a trace: add --trace FILE");
    }
    for (int r : o.trace_ranks) {
        if (r >= run.params.ranks) {
            fail(fmt::format("--trace-ranks: rank {} does not exist (ranks are 0..{})", r, run.params.ranks - 1));
        }
    }
}

std::string cli_message(const std::exception& e) { return message_in(e, Dialect::Cli); }

std::string list_ops_text() {
    std::string out;
    for (const kernels::OpDesc* op : kernels::registered_ops()) {
        out += fmt::format("{}: {}\n", op->name, op->doc);
        for (const kernels::VariantDesc& v : op->variants) {
            std::vector<std::string> in, outs;
            for (DType t : v.dtypes) in.push_back(dtype_name(t));
            for (DType t : v.out_dtypes) outs.push_back(dtype_name(t));
            out += fmt::format("  --variant {}{}: {}\n", v.name, &v == &op->variants.front() ? " (default)" : "", v.doc);
            out += fmt::format("      schedules {}; dtype {}; out-dtype {}; bias {}; comm-mode {}\n", fmt::join(v.schedules, ", "),
                               fmt::join(in, ", "), fmt::join(outs, ", "), v.takes_bias ? "none, m, n" : "none",
                               fmt::join(v.comm_modes, ", "));
            for (const kernels::KnobDesc& k : v.knobs) {
                std::string flag = knob_flag(k.name);
                for (const std::string& a : k.aliases) flag += " (" + a + ")";
                out += fmt::format("      {}: {}\n", flag, k.doc);
            }
            out += fmt::format("      constraints: {}\n", v.constraints);
        }
    }
    return out;
}

std::vector<std::string> command_line_flags() {
    CLI::App app;
    ParseTargets t;
    build_app(app, t, "tandem");
    std::vector<std::string> flags;
    for (const CLI::Option* o : app.get_options()) {
        for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
        for (const std::string& n : o->get_snames()) flags.push_back("-" + n);
    }
    return flags;
}

std::string usage_text(const std::string& program_name) {
    CLI::App app;
    ParseTargets t;
    build_app(app, t, program_name);
    return app.help();
}

int run_config_exit_code(const CLI::Error& e) {
    if (dynamic_cast<const CLI::CallForHelp*>(&e) || dynamic_cast<const CLI::CallForAllHelp*>(&e)) return 0;
    return 2;  // like every other error (docs/RESULTS.md), whatever CLI11's own code for it
}

int report_cli_error(const CLI::Error& e, std::ostream& out, std::ostream& err, const std::string& program_name) {
    const int code = run_config_exit_code(e);
    if (code == 0) {
        out << usage_text(program_name);
    } else {
        err << "[ERROR] " << e.what() << " (run with --help for usage)\n";
    }
    return code;
}

}  // namespace tandem::host
