#pragma once
// What the command line asks (host/cli/options.hpp reads it): one run (or the defaults of a
// sweep's rows, or the shape --tune searches), what the program does with its results, and which
// command it is.
#include <string>

#include "host/batch/batch_options.hpp"
#include "host/params/run_request.hpp"
#include "host/run/program.hpp"

namespace tandem::host {

struct CommandLine {
    RunRequest run;         // the run's parameters (host/params/param_schema.hpp)
    RunOutputs outputs;     // a single run's files: --out-dir, --write-inputs, --input-dir, --trace ...
    BatchOptions batch;     // --sweep, --tune, --sweep-out, --jobs
    std::string json_file;  // --json FILE
    bool quiet = false;
    bool list_ops = false;
};

// The exit code of a --sanitize run that found a violation (1: verification failed, 2: error).
inline constexpr int kSanitizerExitCode = 4;

}  // namespace tandem::host
