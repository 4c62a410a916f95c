#pragma once
// The command line of the host program (the seed's run.sh flags plus Tandem's own, `run.sh
// --help`): every flag is a parameter of the schema (host/params/param_schema.hpp,
// docs/PARAMETERS.md) or an op's knob, and --help is built from the same table.
//
//   CommandLine cl = parse_command_line(argc, argv);   // syntax: flags, numbers, -r npu
//   ResolvedRun run = resolve_run(cl.run, profile);    // the ops facade: defaults, every rule
//   check_program_options(cl, run);                    // the program's own files and flags
// A refused run parameter is a kernels::ParamError; cli_message() says it in the command line's
// words ("--gk 1000: ..."). Every failure is one line naming the flag, the value, the rule and a
// nearby valid value.
#include <exception>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "host/cli/command_line.hpp"
#include "host/ops/op_facade.hpp"

namespace tandem::host {

// Parses the command line. Throws CLI::Error (a CLI::ParseError) for --help, unknown flags and
// malformed values: hand it to report_cli_error(). Throws tandem::SimError for `-r npu` and for
// flags that do not go together with --sweep/--tune (--json, --trace, ...; shape flags with
// --sweep). Does not print anything and does not check the run (the ops facade does).
// argv[0] names the program in --help.
CommandLine parse_command_line(int argc, const char* const* argv);

// The checks of what the program does around the run: output directories exist, --input-dir and
// --write-inputs go with a functional run of an op that keeps the seed's files, the trace
// filters name existing ranks. Throws tandem::SimError in the command line's words.
void check_program_options(const CommandLine& cl, const ResolvedRun& run);

// An error as the command line says it: a ParamError with its flags ("--gk 1000: ..."), any
// other exception's message.
std::string cli_message(const std::exception& e);

// Every name the command line takes for a flag (long names, short names, aliases), as the
// CLI11 app built from the schema has them: what tests hold to the schema.
std::vector<std::string> command_line_flags();

// The --list-ops text: ops, variants, their knobs and constraints.
std::string list_ops_text();

// The full --help text, for program `program_name`.
std::string usage_text(const std::string& program_name = "tandem");

// Exit code for a CLI11 exception: 0 for --help, 2 for every error (as any other error's).
int run_config_exit_code(const CLI::Error& e);

// Prints what a CLI11 exception means (usage to `out` for --help; one "[ERROR] ..." line to
// `err` otherwise) and returns the exit code to use.
int report_cli_error(const CLI::Error& e, std::ostream& out, std::ostream& err,
                     const std::string& program_name = "tandem");

}  // namespace tandem::host
