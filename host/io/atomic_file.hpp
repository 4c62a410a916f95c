#pragma once
// Writing a file so that readers never see it half-written (docs/RESULTS.md "Output files and
// exit codes"): the bytes go to `<path>.tmp.<pid>` first, which is then renamed over `path`.
// A rename within one directory is atomic on POSIX file systems.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace tandem::host {

// Writes `bytes` to `path` atomically. Throws tandem::SimError naming the path on any failure;
// the temporary file is removed in that case.
void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes);

// Why a file cannot be created in directory `dir` ("Permission denied", "Read-only file system"),
// found by creating and removing one there, so that a run finds out before it simulates; empty
// when one can. A directory that does not exist yet is judged by its nearest existing parent,
// where it would be made.
std::string cannot_create_in(const std::filesystem::path& dir);

// The temporary name used for `path` by this process.
std::filesystem::path temp_path_for(const std::filesystem::path& path);

}  // namespace tandem::host
