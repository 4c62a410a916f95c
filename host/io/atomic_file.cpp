// Atomic file writes: temp file + rename (sim/output_file.hpp). See atomic_file.hpp.
#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "sim/output_file.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {

std::filesystem::path temp_path_for(const std::filesystem::path& path) { return plan_output_file(path).write_path; }

std::string cannot_create_in(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::path at = dir.empty() ? std::filesystem::path(".") : dir;
    while (!std::filesystem::exists(at, ec) && at.has_parent_path() && at != at.parent_path()) at = at.parent_path();
    if (!std::filesystem::is_directory(at, ec)) return {};  // a path through a file: the callers' own checks say so
    const std::filesystem::path probe = temp_path_for(at / ".tandem_write_check");
    std::FILE* f = std::fopen(probe.c_str(), "wb");
    if (f == nullptr) return std::strerror(errno);
    std::fclose(f);
    std::filesystem::remove(probe, ec);
    return {};
}

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
