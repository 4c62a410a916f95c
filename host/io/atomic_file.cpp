// Atomic file writes: temp file + rename (sim/output_file.hpp). See atomic_file.hpp.
#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "sim/output_file.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {

std::filesystem::path temp_path_for(const std::filesystem::path& path) { return plan_output_file(path).write_path; }

void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes) {
    OutputFile file;
    try {
        file = plan_output_file(path);
    } catch (const tandem::SimError& e) {
        throw tandem::SimError(fmt::format("cannot write '{}': {}", path.string(), e.what()));
    }
    auto fail = [&](const std::string& what) {
        discard_output_file(file);
        throw tandem::SimError(fmt::format("cannot write '{}': {}", path.string(), what));
    };
    {
        std::ofstream out(file.write_path, std::ios::binary | std::ios::trunc);
        if (!out) fail(fmt::format("cannot create '{}': {}", file.write_path.string(), std::strerror(errno)));
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) fail(fmt::format("writing '{}' failed: {}", file.write_path.string(), std::strerror(errno)));
    }
    commit_output_file(file);
}

}  // namespace tandem::host
