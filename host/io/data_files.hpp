#pragma once
// The seed's data files (kernels/allgather_gemm/README.md "Data layout"): raw little-endian, row-major, no header.
//   pe_<r>_a.bin      fp16, (M/n) x K   rank r's slice of A
//   pe_<r>_b.bin      fp16, N x K       B stored transposed ("DN"), the same on every rank
//   golden.bin        fp32, M x N       the reference C
//   output_rank<r>.bin fp32, M x N      what rank r computed
// Reads check the file size against the expected shape; writes go through a temp file and a
// rename, so a reader never sees half a file; the file's directory is created if missing.
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace tandem::host {

std::filesystem::path a_slice_path(const std::filesystem::path& dir, int rank);
std::filesystem::path b_transposed_path(const std::filesystem::path& dir, int rank);
std::filesystem::path golden_path(const std::filesystem::path& dir);
std::filesystem::path output_path(const std::filesystem::path& dir, int rank);

// fp16 values are raw IEEE binary16 bits (see sim/mem/fp16.hpp for conversions).
// `rows` x `cols` is the shape the data must have; it only appears in error messages and the
// size check (data.size() must equal rows * cols).
void write_fp16_file(const std::filesystem::path& path, std::span<const std::uint16_t> data, std::int64_t rows,
                     std::int64_t cols);
void write_fp32_file(const std::filesystem::path& path, std::span<const float> data, std::int64_t rows,
                     std::int64_t cols);

// Read a whole file of exactly rows x cols elements. Throws tandem::SimError naming the file,
// the expected and the actual byte counts when the size differs, or when it cannot be read.
std::vector<std::uint16_t> read_fp16_file(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols);
std::vector<float> read_fp32_file(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols);

}  // namespace tandem::host
