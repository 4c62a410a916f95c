#include "sim/output_file.hpp"

#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "sim/sim_error.hpp"

namespace tandem {

namespace fs = std::filesystem;

OutputFile plan_output_file(const fs::path& path) {
    OutputFile f;
    f.target = path;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);  // what the path names, through any links
    if (fs::is_directory(st)) throw SimError(fmt::format("'{}' is a directory; give a file name", path.string()));
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        // A device or a FIFO (also behind a link, /dev/stdout): opened through the path itself,
        // as the kernel resolves it (a /proc/self/fd link names no path a rename could use).
        f.in_place = true;
        f.write_path = path;
        return f;
    }
    // A regular file, or none yet: a link is followed to its end (a chain of links, relative
    // ones from their own directory), so that the rename replaces the file and the link stays;
    // a dangling link names the file to create. A loop stops at the system's usual 40 links.
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(f.target, ec)); ++hops) {
        const fs::path next = fs::read_symlink(f.target, ec);
        if (ec) break;
        f.target = next.is_absolute() ? next : f.target.parent_path() / next;
    }
    // The pid keeps concurrent runs writing the same target from clobbering each other's temp file.
    f.write_path = fs::path(f.target.string() + ".tmp." + std::to_string(::getpid()));
    return f;
}

void commit_output_file(const OutputFile& f) {
    if (f.in_place) return;
    std::error_code ec;
    fs::rename(f.write_path, f.target, ec);
    if (ec) {
        discard_output_file(f);
        throw SimError(fmt::format("cannot write '{}': {}", f.target.string(), ec.message()));
    }
}

void discard_output_file(const OutputFile& f) noexcept {
    if (f.in_place) return;
    std::error_code ignored;
    fs::remove(f.write_path, ignored);
}

}  // namespace tandem
