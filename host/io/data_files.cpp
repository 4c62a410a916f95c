// Reading and writing the seed's raw binary files. See data_files.hpp.
#include "host/io/data_files.hpp"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "host/io/atomic_file.hpp"
#include "sim/sim_error.hpp"

namespace tandem::host {
namespace {

// The files are little-endian and so is every host Tandem builds on; a big-endian port would
// need a byte swap here.
static_assert(std::endian::native == std::endian::little, "data files are little-endian");

template <typename T>
void write_matrix(const std::filesystem::path& path, std::span<const T> data, std::int64_t rows, std::int64_t cols,
                  const char* dtype) {
    if (rows < 0 || cols < 0 || static_cast<std::int64_t>(data.size()) != rows * cols) {
        throw tandem::SimError(fmt::format("cannot write '{}': {} {} x {} needs {} elements, got {}", path.string(),
                                           dtype, rows, cols, rows * cols, data.size()));
    }
    // The output directory (default "out") is created on demand, as the seed's gen_data.py does.
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw tandem::SimError(fmt::format("cannot write '{}': cannot create its directory: {}", path.string(), ec.message()));
    write_file_atomic(path, std::as_bytes(data));
}

template <typename T>
std::vector<T> read_matrix(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols,
                           const char* dtype) {
    const std::int64_t expected = rows * cols * static_cast<std::int64_t>(sizeof(T));
    std::error_code ec;
    const auto actual = std::filesystem::file_size(path, ec);
    if (ec) throw tandem::SimError(fmt::format("cannot read '{}': {}", path.string(), ec.message()));
    if (static_cast<std::int64_t>(actual) != expected) {
        throw tandem::SimError(fmt::format("'{}' has {} bytes, expected {} ({} {} x {}, {} bytes each)",
                                           path.string(), actual, expected, dtype, rows, cols, sizeof(T)));
    }
    std::vector<T> data(static_cast<std::size_t>(rows * cols));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(expected));
    if (!in) throw tandem::SimError(fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
    return data;
}

}  // namespace

std::filesystem::path a_slice_path(const std::filesystem::path& dir, int rank) {
    return dir / fmt::format("pe_{}_a.bin", rank);
}
std::filesystem::path b_transposed_path(const std::filesystem::path& dir, int rank) {
    return dir / fmt::format("pe_{}_b.bin", rank);
}
std::filesystem::path golden_path(const std::filesystem::path& dir) { return dir / "golden.bin"; }
std::filesystem::path output_path(const std::filesystem::path& dir, int rank) {
    return dir / fmt::format("output_rank{}.bin", rank);
}

void write_fp16_file(const std::filesystem::path& path, std::span<const std::uint16_t> data, std::int64_t rows,
                     std::int64_t cols) {
    write_matrix(path, data, rows, cols, "fp16");
}
void write_fp32_file(const std::filesystem::path& path, std::span<const float> data, std::int64_t rows,
                     std::int64_t cols) {
    write_matrix(path, data, rows, cols, "fp32");
}
std::vector<std::uint16_t> read_fp16_file(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols) {
    return read_matrix<std::uint16_t>(path, rows, cols, "fp16");
}
std::vector<float> read_fp32_file(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols) {
    return read_matrix<float>(path, rows, cols, "fp32");
}

}  // namespace tandem::host
