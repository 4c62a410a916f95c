// Atomic file writes: temp file + rename. See atomic_file.hpp.
#include "host/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "sim/sim_error.hpp"

namespace tandem::host {

std::filesystem::path temp_path_for(const std::filesystem::path& path) {
    // The pid keeps concurrent runs writing the same target from clobbering each other's temp file.
    return std::filesystem::path(path.string() + ".tmp." + std::to_string(::getpid()));
}

void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes) {
    const std::filesystem::path tmp = temp_path_for(path);
    auto fail = [&](const std::string& what) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw tandem::SimError(fmt::format("cannot write '{}': {}", path.string(), what));
    };
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail(fmt::format("cannot create '{}': {}", tmp.string(), std::strerror(errno)));
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) fail(fmt::format("writing '{}' failed: {}", tmp.string(), std::strerror(errno)));
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) fail(fmt::format("renaming '{}' failed: {}", tmp.string(), ec.message()));
}

}  // namespace tandem::host
