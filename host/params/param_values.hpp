#pragma once
// A Run parameter's value as text and back, by its type in the schema: how the command line,
// a sweep cell, the MPI wire and --tune's "Run it" line read and write a RunRequest, and how the
// results JSON gets its identity keys. One parser per type, so a value means the same wherever
// it is written.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "host/params/param_schema.hpp"
#include "host/params/run_request.hpp"

namespace tandem::host {

// The parsers. Each throws tandem::SimError with what is wrong with the text ("'0x10' is not a
// whole decimal number"), without the parameter's name: the caller says which, in its words.
// Sizes are decimal: "0100" is 100 (not octal); "0x10", "1e3", "2.5" are refused, as is a value
// that does not fit an int.
int parse_int_text(const std::string& text);
// An op's knob from its text: an integer, or one of the knob's words (KnobDesc::parse_words),
// which may set other knobs too: the knob values it stands for. Throws as the parsers do, listing
// the words when the knob has some. An unknown knob takes integers only.
std::map<std::string, int> parse_knob_text(const std::string& knob, const std::string& text);
// `s` in lower case (ASCII), as the parsers compare names and choices.
std::string lower_case(std::string s);
// true/false (also 1/0, yes/no; any case).
bool parse_flag_text(const std::string& text);
// One of the parameter's choices (any case); the choice as the schema writes it.
std::string parse_choice_text(const ParamDesc& p, const std::string& text);
// fp16, bf16, fp32 (int8 is refused with why).
DType parse_dtype_text(const std::string& text);
kernels::BiasKind parse_bias_text(const std::string& text);

// Sets Run parameter `p` of `r` from `text` (Soc: a SoC name; ProfileFile: a path). Throws as
// the parsers do; std::logic_error for a parameter that is not a Run parameter.
void set_param(RunRequest& r, Param p, const std::string& text);

// A Run parameter's value as text (what set_param reads back); nullopt when it is unset.
std::optional<std::string> param_text(const RunRequest& r, Param p);

// Leaves Run parameter `p` of `r` unset (resolved per run), where it can be: a name or an
// optional value; the others keep their value.
void unset_param(RunRequest& r, Param p);

// The value the results JSON gives a Run parameter that has a json_key: Int parameters as
// numbers, timing_only as the data mode ("functional" | "timing-only"), the rest as text.
nlohmann::json param_json(const RunRequest& r, Param p);

// The inverse of param_json (the MPI wire's identity). Throws tandem::SimError if malformed.
void set_param_from_json(RunRequest& r, Param p, const nlohmann::json& value);

// "functional" | "timing-only": the results' data_mode.
const char* data_mode_name(bool timing_only);

}  // namespace tandem::host
