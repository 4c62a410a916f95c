#pragma once
// How the host refuses: a SimError carrying one message, already in its caller's words
// (host/params/param_words.hpp). One definition for every host file, so none keeps its own copy.
#include <string>

#include "sim/sim_error.hpp"

namespace tandem::host {

[[noreturn]] inline void fail(const std::string& message) { throw tandem::SimError(message); }

}  // namespace tandem::host
