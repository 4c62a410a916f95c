#pragma once
// Where an output file (a trace, a results JSON, an output matrix) is written, so that a reader
// never sees half of it and nothing but the file is touched.
//
// A regular file (or a path that does not exist yet) is written to `<path>.tmp.<pid>` beside it
// and renamed over it at the end: a rename within one directory is atomic on POSIX. A symbolic
// link is followed to what it names, so the link stays and its target gets the file. Anything
// else that exists at the path (a device such as /dev/null or /dev/stdout, a FIFO) cannot be
// renamed over without destroying it: it is written in place.
#include <filesystem>

namespace tandem {

struct OutputFile {
    std::filesystem::path target;      // the file that gets the bytes (a symlink followed)
    std::filesystem::path write_path;  // where they are written: a temporary name, or `target`
    bool in_place = false;             // written straight into target (not a regular file)
};

// Plans a write to `path`. Throws SimError naming `path` when it is a directory.
OutputFile plan_output_file(const std::filesystem::path& path);

// Puts the written bytes in place (the rename; nothing for an in-place write). Throws SimError
// naming the target on failure, after removing the temporary file.
void commit_output_file(const OutputFile& f);

// Removes the temporary file of a failed write (nothing for an in-place write). Never throws.
void discard_output_file(const OutputFile& f) noexcept;

}  // namespace tandem
