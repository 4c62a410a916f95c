#pragma once
// The one exception type the simulator throws for a user-visible problem (bad input, a kernel
// fault, a deadlock). Its message is complete on its own: what was wrong and where. Programs
// catch it at their edge, print it once and exit non-zero.
#include <stdexcept>
#include <string>

namespace tandem {

class SimError : public std::runtime_error {
public:
    explicit SimError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tandem
