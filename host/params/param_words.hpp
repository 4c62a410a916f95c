#pragma once
// A parameter in its caller's words. The ops and the run checks name what they refuse by the
// parameter (kernels::ParamError: "K = 1000: ..."); each caller says it as its user writes it,
// from the schema (host/params/param_schema.hpp):
//   command line and sweep rows   --gk 1000: K must be a multiple of base-n = 256 (...); nearest valid: 1024
//   Python module                 k=1000: K must be a multiple of base-n = 256 (...); nearest valid: 1024
//   C++ API                       K = 1000: ...; base_m = 64: ... (OpConfig's and ContextOptions' fields by name)
// An op's knob is spelled by the knob rule (--chunk-tiles, chunk_tiles).
#include <exception>
#include <string>

#include "kernels/param_error.hpp"

namespace tandem::host {

enum class Dialect { Cli, Python, Cpp };

// How `d` writes parameter `name` (the schema's name or a knob's) without a value: "--gk",
// "k", "K". A command line writes a one-letter alias where there is one ("-n").
std::string param_name_in(const std::string& name, Dialect d);

// How `d` writes `p` with its value: "--gk 1000", "k=1000", "K = 1000".
std::string param_value_in(const kernels::ParamValue& p, Dialect d);

// The error's message in `d`'s words: a ParamError re-spelled, any other exception's what().
std::string message_in(const std::exception& e, Dialect d);

}  // namespace tandem::host
