// The seed's data files and inputs (host/io/data_files.hpp, host/run/input_gen.hpp): round trips,
// size checks, the generator, and byte-identity with scripts/gen_data.py.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "host/io/atomic_file.hpp"
#include "host/io/data_files.hpp"
#include "host/run/input_gen.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/sim_error.hpp"

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

namespace tandem::host {
namespace data_files_test {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("tandem_data_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const SimError& e) {
        return e.what();
    }
    return "";
}

TEST(DataFiles, SeedFileNames) {
    EXPECT_EQ(a_slice_path("out", 3), fs::path("out/pe_3_a.bin"));
    EXPECT_EQ(b_transposed_path("out", 0), fs::path("out/pe_0_b.bin"));
    EXPECT_EQ(golden_path("out"), fs::path("out/golden.bin"));
    EXPECT_EQ(output_path("out", 7), fs::path("out/output_rank7.bin"));
}

TEST(DataFiles, RoundTripIsRawLittleEndian) {
    const fs::path dir = fresh_dir("roundtrip");
    const std::vector<std::uint16_t> h = {0x3C00, 0x4000, 0x4200, 0x4400, 0x0001, 0xFBFF};  // 1 2 3 4 ...
    write_fp16_file(a_slice_path(dir, 0), h, 2, 3);
    EXPECT_EQ(read_fp16_file(a_slice_path(dir, 0), 2, 3), h);
    const std::string raw = file_bytes(a_slice_path(dir, 0));
    ASSERT_EQ(raw.size(), 12u);
    EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x00);  // 0x3C00, low byte first
    EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x3C);

    const std::vector<float> f = {1.0f, -2.5f, 3e10f, 0.0f};
    write_fp32_file(output_path(dir, 1), f, 2, 2);
    EXPECT_EQ(read_fp32_file(output_path(dir, 1), 2, 2), f);
    EXPECT_EQ(fs::file_size(output_path(dir, 1)), 16u);
    for (const auto& entry : fs::directory_iterator(dir)) {
        EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
    }
    fs::remove_all(dir);
}

TEST(DataFiles, SizeMismatchNamesFileAndBytes) {
    const fs::path dir = fresh_dir("mismatch");
    write_fp32_file(golden_path(dir), std::vector<float>(6, 1.0f), 2, 3);
    const std::string e = error_of([&] { (void)read_fp32_file(golden_path(dir), 4, 3); });
    EXPECT_NE(e.find("golden.bin"), std::string::npos) << e;
    EXPECT_NE(e.find("has 24 bytes"), std::string::npos) << e;
    EXPECT_NE(e.find("expected 48"), std::string::npos) << e;
    EXPECT_NE(e.find("fp32 4 x 3"), std::string::npos) << e;
    fs::remove_all(dir);
}

TEST(DataFiles, MissingFileAndBadWrites) {
    const fs::path dir = fresh_dir("missing");
    EXPECT_NE(error_of([&] { (void)read_fp16_file(a_slice_path(dir, 5), 1, 1); }).find("pe_5_a.bin"),
              std::string::npos);
    // Data that does not match the shape it claims.
    EXPECT_NE(error_of([&] { write_fp16_file(a_slice_path(dir, 0), std::vector<std::uint16_t>(5), 2, 3); })
                  .find("needs 6 elements, got 5"),
              std::string::npos);
    // A path whose "directory" is a regular file: the error names the path, nothing is left behind.
    const fs::path blocker = dir / "blocker";
    write_fp32_file(blocker, std::vector<float>(1), 1, 1);
    const fs::path bad = blocker / "golden.bin";
    EXPECT_NE(error_of([&] { write_fp32_file(bad, std::vector<float>(1), 1, 1); }).find(bad.string()),
              std::string::npos);
    fs::remove(blocker);
    EXPECT_TRUE(fs::is_empty(dir));
    fs::remove_all(dir);
}

TEST(DataFiles, WritesCreateTheOutputDirectory) {
    const fs::path dir = fresh_dir("mkdir");
    const fs::path out = dir / "out" / "sub";
    write_fp32_file(output_path(out, 0), std::vector<float>{1.0f, 2.0f}, 1, 2);
    EXPECT_EQ(read_fp32_file(output_path(out, 0), 1, 2), (std::vector<float>{1.0f, 2.0f}));
    fs::remove_all(dir);
}

TEST(InputGen, Splitmix64KnownOutputs) {
    // Published splitmix64 outputs (Vigna's reference implementation).
    EXPECT_EQ(splitmix64_at(0, 0), 0xE220A8397B1DCDAFULL);
    EXPECT_EQ(splitmix64_at(0, 1), 0x6E789E6AA1B965F4ULL);
    EXPECT_EQ(splitmix64_at(1234567, 0), 6457827717110365317ULL);
}

TEST(InputGen, Splitmix64RunMatchesOneAtATime) {
    // The bulk form (four lanes at a time where the CPU has AVX2) gives splitmix64_at's outputs,
    // for any start, any count (tails of 1-3), and across the counter's wrap at 2^64.
    const std::uint64_t states[] = {0, 1234567, 0x4141414141414141ULL ^ 2025, ~std::uint64_t{0}};
    const std::uint64_t firsts[] = {0, 5, 1000003, ~std::uint64_t{0} - 6};
    for (std::uint64_t state : states) {
        for (std::uint64_t first : firsts) {
            for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{13}, std::size_t{256}}) {
                std::vector<std::uint64_t> out(count + 1, 0x5A5A5A5AULL);
                splitmix64_run(state, first, out.data(), count);
                for (std::size_t i = 0; i < count; ++i)
                    ASSERT_EQ(out[i], splitmix64_at(state, first + i)) << state << " " << first << " " << i;
                EXPECT_EQ(out[count], 0x5A5A5A5AULL);  // nothing written past the end
            }
        }
    }
}

TEST(InputGen, ValuesAreSmallIntegersAndDeterministic) {
    const auto a = make_a_slice(0, 64, 32, 7);
    ASSERT_EQ(a.size(), 64u * 32u);
    int seen[5] = {};
    for (std::uint16_t bits : a) {
        const float v = half_to_float(bits);
        ASSERT_TRUE(v == 1.0f || v == 2.0f || v == 3.0f || v == 4.0f) << v;
        ++seen[static_cast<int>(v)];
    }
    for (int v = 1; v <= 4; ++v) EXPECT_GT(seen[v], 400) << v;  // roughly uniform over 2048 values
    EXPECT_EQ(a, make_a_slice(0, 64, 32, 7));
    EXPECT_NE(a, make_a_slice(0, 64, 32, 8));
    EXPECT_NE(make_b_transposed(64, 32, 7), a);  // A and B use different streams
}

TEST(InputGen, ASlicesDoNotDependOnTheRankCount) {
    // Rank 1 of 2 holds the second half of what a single rank would hold.
    const auto whole = make_a_slice(0, 8, 16);
    const auto second = make_a_slice(1, 4, 16);
    EXPECT_EQ(std::vector<std::uint16_t>(whole.begin() + 4 * 16, whole.end()), second);
}

// scripts/gen_data.py must produce the same bytes as the C++ generator.
TEST(InputGen, MatchesGenDataPy) {
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
    }
    const fs::path dir = fresh_dir("gen_data_py");
    const int ranks = 2, m = 64, k = 48, n = 32;
    const std::uint64_t seed = 99;
    const std::string cmd = std::string("/usr/bin/python3 ") + TANDEM_SOURCE_DIR + "/scripts/gen_data.py --ranks " +
                            std::to_string(ranks) + " --gm " + std::to_string(m) + " --gk " + std::to_string(k) +
                            " --gn " + std::to_string(n) + " --seed " + std::to_string(seed) + " --out " +
                            dir.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

    const int rows = m / ranks;
    std::vector<std::vector<std::uint16_t>> slices;
    for (int r = 0; r < ranks; ++r) {
        slices.push_back(make_a_slice(r, rows, k, seed));
        EXPECT_EQ(read_fp16_file(a_slice_path(dir, r), rows, k), slices.back()) << "pe_" << r << "_a.bin";
    }
    const auto bt = make_b_transposed(n, k, seed);
    for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(read_fp16_file(b_transposed_path(dir, r), n, k), bt) << "pe_" << r << "_b.bin";
    }
    // golden = A (M x K) * B (K x N), with B stored transposed; exact for these integers.
    const auto golden = read_fp32_file(golden_path(dir), m, n);
    for (int i = 0; i < m; ++i) {
        const auto& a = slices[static_cast<std::size_t>(i / rows)];
        for (int j = 0; j < n; ++j) {
            float sum = 0;
            for (int kk = 0; kk < k; ++kk) {
                sum += half_to_float(a[static_cast<std::size_t>((i % rows) * k + kk)]) *
                       half_to_float(bt[static_cast<std::size_t>(j * k + kk)]);
            }
            ASSERT_EQ(golden[static_cast<std::size_t>(i * n + j)], sum) << i << "," << j;
        }
    }
    fs::remove_all(dir);
}

TEST(InputGen, GenDataPyRejectsBadArguments) {
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
    }
    const fs::path dir = fresh_dir("gen_data_bad_args");
    const std::string script = std::string("/usr/bin/python3 ") + TANDEM_SOURCE_DIR + "/scripts/gen_data.py";
    const std::string out = " --out " + dir.string() + " >/dev/null 2>&1";
    EXPECT_NE(std::system((script + " --ranks 3 --gm 8 --gk 4 --gn 4" + out).c_str()), 0);  // M % ranks
    EXPECT_NE(std::system((script + " --ranks x --gm 8 --gk 4 --gn 4" + out).c_str()), 0);  // not a number
    EXPECT_NE(std::system((script + " --gm 8 --gk 4 --gn 4" + out).c_str()), 0);            // --ranks missing
    EXPECT_TRUE(fs::is_empty(dir));
    fs::remove_all(dir);
}

}  // namespace data_files_test
}  // namespace tandem::host
