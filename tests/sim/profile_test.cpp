// Tests for the hardware profile loader: the shipped profiles load with sane values, and every
// kind of malformed file is rejected with a message naming the file and the offending key.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "sim/profile.hpp"
#include "sim/sim_error.hpp"

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

namespace tandem {
namespace profile_test {

namespace fs = std::filesystem;

fs::path shipped_dir() { return fs::path(TANDEM_SOURCE_DIR) / "sim" / "profiles"; }

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text;
}

// `text` with everything but letters and digits replaced by '_' (for test and file names).
std::string identifier(std::string_view text) {
    std::string out;
    for (const char ch : text) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return out;
}

// A fresh directory per test, removed afterwards, so that tests can run in parallel
// (gtest_discover_tests runs each test in its own process).
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path_ = fs::temp_directory_path() / ("tandem_profile_test_" + std::to_string(::getpid()) + "_" +
                                             identifier(info->test_suite_name()) + "_" + identifier(info->name()));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

// How a test case derives its file from the shipped Ascend910B1 profile. Profiles keep one
// entry per line, so a line is found by its key or section header.
enum class Edit {
    None,         // the file as shipped
    Replace,      // replace the line starting with `key =` by the text
    InsertAfter,  // insert the text after the line `key` (a section header)
    CutFrom,      // drop everything from the line `key` (a section header) on
};

std::string edited(const std::string& text, Edit edit, const std::string& key, const std::string& replacement) {
    if (edit == Edit::None) return text;
    std::istringstream in(text);
    std::string line;
    std::string out;
    bool found = false;
    while (std::getline(in, line)) {
        const bool match = !found && (edit == Edit::Replace ? line.rfind(key + " =", 0) == 0 : line == key);
        found = found || match;
        if (match && edit == Edit::CutFrom) break;
        out += (match && edit == Edit::Replace ? replacement : line) + "\n";
        if (match && edit == Edit::InsertAfter) out += replacement + "\n";
    }
    EXPECT_TRUE(found) << "test setup: no line '" << key << "' in the base profile";
    return out;
}

// Returns the SimError message thrown by loading `file`, or nothing if it loaded.
std::optional<std::string> load_error(const fs::path& file) {
    try {
        load_profile(file);
    } catch (const SimError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

// ---- shipped profiles ----

TEST(ProfileTest, EveryShippedProfileLoads) {
    for (const char* soc : {"Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"}) {
        SCOPED_TRACE(soc);
        const Profile p = load_profile_by_soc(soc, shipped_dir());
        EXPECT_EQ(p.name, soc);
        EXPECT_FALSE(p.description.empty());
        EXPECT_EQ(p.file.filename(), std::string(soc) + ".toml");
        EXPECT_EQ(p.chip.aiv_cores, 2 * p.chip.aic_cores);  // 1 AIC : 2 AIV on 910B
        EXPECT_DOUBLE_EQ(p.chip.core_clock_mhz, 1800);
        EXPECT_EQ(p.chip.l1_bytes, 512 * 1024);
        EXPECT_EQ(p.chip.l0a_bytes, 64 * 1024);
        EXPECT_EQ(p.chip.l0b_bytes, 64 * 1024);
        EXPECT_EQ(p.chip.l0c_bytes, 128 * 1024);
        EXPECT_EQ(p.chip.ub_bytes, 192 * 1024 - 8 * 1024);
        EXPECT_EQ(p.chip.l2_bytes, std::int64_t{192} << 20);
        EXPECT_EQ(p.chip.gm_bytes, std::int64_t{64} << 30);
        EXPECT_GE(p.pipes.gm_to_l1_gib_s, 135);  // Huawei's fitted figure is the floor of the calibrated one
        EXPECT_DOUBLE_EQ(p.pipes.gm_to_ub_gib_s, 100.9);
        // 128 B per core cycle (the cost model's 220.5 GiB/s at its 1.85 GHz, docs/HARDWARE.md),
        // and L1 -> L0A 256 B (441 GiB/s), at the profile's own clock.
        EXPECT_NEAR(p.pipes.l1_to_l0b_gib_s, 128.0 * p.chip.core_clock_mhz * 1e6 / (1 << 30), 0.01);
        EXPECT_NEAR(p.pipes.l1_to_l0a_gib_s, 256.0 * p.chip.core_clock_mhz * 1e6 / (1 << 30), 0.01);
        EXPECT_EQ(p.pipes.cube_fractal, 16);
        EXPECT_GT(p.pipes.cube_efficiency, 0);
        EXPECT_LE(p.pipes.cube_efficiency, 1);
        // The L2 carries more than HBM, what the measured dense GEMM needs (308 TFLOPS at 6144^3
        // reads about 3.4 TiB/s from it) and what every cube core's MTE2 asks at its fitted rate:
        // the chip's dense GEMMs are bound by each core's GM -> L1 rate, not by the L2
        // (sim/CALIBRATION.md).
        EXPECT_GT(p.chip.l2_gib_s, p.chip.hbm_gib_s);
        EXPECT_GE(p.chip.l2_gib_s, 3500);
        EXPECT_GE(p.chip.l2_gib_s, p.chip.aic_cores * p.pipes.gm_to_l1_gib_s);
        EXPECT_GT(p.chip.l2_region_bytes, 0);
        EXPECT_EQ(p.interconnect.topology, TopologyKind::FullMesh);
        EXPECT_GT(p.interconnect.link_gb_s, 0);
        EXPECT_GT(p.host.launch_to_start_us, 0);
    }
}

TEST(ProfileTest, CoreCountsDifferBetweenB1AndB3) {
    EXPECT_EQ(load_profile_by_soc("Ascend910B1", shipped_dir()).chip.aic_cores, 24);
    EXPECT_EQ(load_profile_by_soc("Ascend910B2", shipped_dir()).chip.aic_cores, 24);
    EXPECT_EQ(load_profile_by_soc("Ascend910B3", shipped_dir()).chip.aic_cores, 20);
    EXPECT_EQ(load_profile_by_soc("Ascend910B4", shipped_dir()).chip.aiv_cores, 40);
    for (const char* a3 : {"Ascend910_9362", "Ascend910_9372"}) {
        const Profile p = load_profile_by_soc(a3, shipped_dir());
        EXPECT_EQ(p.chip.aic_cores, 20) << a3;
        // The MC2 'double ring' is an algorithm constraint; the wiring is the node's switch planes.
        EXPECT_EQ(p.interconnect.topology, TopologyKind::Switched) << a3;
        EXPECT_EQ(p.derives_from, "Ascend910_9382") << a3;
    }
}

TEST(ProfileTest, A2ProfilesDescribeClustersOfEightChipServers) {
    for (const char* soc : {"Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"}) {
        const InterconnectProfile net = load_profile_by_soc(soc, shipped_dir()).interconnect;
        EXPECT_EQ(net.topology, TopologyKind::FullMesh) << soc;
        EXPECT_EQ(net.ranks_per_node, 8) << soc;
        EXPECT_EQ(cluster_max_ranks(net), 384) << soc;  // -n 384 stays a valid run: 48 servers
        EXPECT_EQ(net.between_nodes, BetweenNodes::Nic) << soc;
        EXPECT_GT(net.scale_out_gb_s, 0) << soc;
        EXPECT_EQ(net.dies_per_package, 1) << soc;
    }
}

TEST(ProfileTest, A3ProfilesAreDiesOfCloudMatrix384) {
    for (const char* soc : {"Ascend910_9392", "Ascend910_9382"}) {
        const Profile p = load_profile_by_soc(soc, shipped_dir());
        EXPECT_EQ(p.chip.aic_cores, 24) << soc;
        EXPECT_EQ(p.chip.aiv_cores, 48) << soc;
        const InterconnectProfile& net = p.interconnect;
        EXPECT_EQ(net.topology, TopologyKind::Switched) << soc;
        EXPECT_EQ(net.ranks_per_node, 16) << soc;
        EXPECT_EQ(cluster_max_ranks(net), 768) << soc;
        EXPECT_EQ(net.switch_planes, 7) << soc;
        EXPECT_DOUBLE_EQ(net.link_gb_s * net.switch_planes, 196) << soc;  // per die, per direction
        EXPECT_EQ(net.dies_per_package, 2) << soc;
        EXPECT_DOUBLE_EQ(net.package_link_gb_s, 270) << soc;
        EXPECT_EQ(net.between_nodes, BetweenNodes::SwitchTier) << soc;
        EXPECT_EQ(net.scale_out_gb_s, 0) << soc;
    }
    EXPECT_DOUBLE_EQ(load_profile_by_soc("Ascend910_9392", shipped_dir()).chip.core_clock_mhz, 1850);
    EXPECT_DOUBLE_EQ(load_profile_by_soc("Ascend910_9382", shipped_dir()).chip.core_clock_mhz, 1800);
}

// A derived profile is its base with its own entries laid over; what it does not state is the
// base's, so the shipped derived profiles are short.
TEST(ProfileTest, DerivedProfileTakesWhatItDoesNotState) {
    const Profile b1 = load_profile_by_soc("Ascend910B1", shipped_dir());
    const Profile b3 = load_profile_by_soc("Ascend910B3", shipped_dir());
    EXPECT_EQ(b3.derives_from, "Ascend910B1");
    EXPECT_EQ(b3.chip.aic_cores, 20);
    EXPECT_EQ(b3.pipes.gm_to_l1_gib_s, b1.pipes.gm_to_l1_gib_s);
    EXPECT_EQ(b3.interconnect.remote_store_gib_s, b1.interconnect.remote_store_gib_s);
    EXPECT_EQ(b3.host.sync_us, b1.host.sync_us);
    const Profile a3 = load_profile_by_soc("Ascend910_9372", shipped_dir());  // 9372 <- 9382 <- 9392 <- B1
    EXPECT_EQ(a3.pipes.cube_efficiency, b1.pipes.cube_efficiency);
    EXPECT_DOUBLE_EQ(a3.chip.core_clock_mhz, 1800);
    for (const char* soc : {"Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9362", "Ascend910_9372",
                            "Ascend910_9382", "Ascend910_9392"}) {
        std::istringstream in(read_file(shipped_dir() / (std::string(soc) + ".toml")));
        int lines = 0;
        for (std::string line; std::getline(in, line);) ++lines;
        EXPECT_LE(lines, 40) << soc << " copies more than it states";
    }
}

TEST(ProfileTest, UserProfileDerivesFromAShippedOneByName) {
    TempDir dir;
    const fs::path file = dir.path() / "BigA2.toml";
    write_file(file,
               "[meta]\nname = \"BigA2\"\nderives_from = \"Ascend910B1\"\ndescription = \"more servers\"\n"
               "[interconnect]\nmax_nodes = { value = 96, source = \"test\" }\n");
    const char* old = std::getenv("TANDEM_PROFILE_DIR");
    const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("TANDEM_PROFILE_DIR", shipped_dir().c_str(), 1);
    const Profile p = load_profile(file);
    if (saved) ::setenv("TANDEM_PROFILE_DIR", saved->c_str(), 1);
    else ::unsetenv("TANDEM_PROFILE_DIR");
    EXPECT_EQ(p.name, "BigA2");
    EXPECT_EQ(cluster_max_ranks(p.interconnect), 768);
    EXPECT_EQ(p.chip.aic_cores, 24);
}

TEST(ProfileTest, DerivationErrorsNameTheFileAndTheBase) {
    TempDir dir;
    const fs::path missing = dir.path() / "NoBase.toml";
    write_file(missing, "[meta]\nname = \"NoBase\"\nderives_from = \"Nowhere9\"\ndescription = \"x\"\n");
    std::optional<std::string> msg = load_error(missing);
    ASSERT_TRUE(msg.has_value());
    EXPECT_NE(msg->find("meta.derives_from"), std::string::npos) << *msg;
    EXPECT_NE(msg->find("Nowhere9"), std::string::npos) << *msg;
    const fs::path loop = dir.path() / "LoopA.toml";
    write_file(loop, "[meta]\nname = \"LoopA\"\nderives_from = \"LoopA\"\ndescription = \"x\"\n");
    msg = load_error(loop);
    ASSERT_TRUE(msg.has_value());
    EXPECT_NE(msg->find("loop"), std::string::npos) << *msg;
}

TEST(ProfileTest, UnknownSocListsAvailableProfilesSorted) {
    try {
        load_profile_by_soc("Ascend999", shipped_dir());
        FAIL() << "expected SimError";
    } catch (const SimError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("unknown SoC 'Ascend999'"), std::string::npos) << msg;
        EXPECT_NE(msg.find(shipped_dir().string()), std::string::npos) << msg;
        EXPECT_NE(msg.find("Ascend910B1, Ascend910B2, Ascend910B3, Ascend910B4, Ascend910_9362, Ascend910_9372, "
                           "Ascend910_9382, Ascend910_9392"),
                  std::string::npos) << msg;
    }
}

TEST(ProfileTest, SocNameWithAPathIsRejected) {
    // "../profiles/Ascend910B1" would name a real file; a SoC is a bare name.
    EXPECT_THROW(load_profile_by_soc("../profiles/Ascend910B1", shipped_dir()), SimError);
}

TEST(ProfileTest, TopologyNames) {
    EXPECT_STREQ(topology_name(TopologyKind::FullMesh), "full_mesh");
    EXPECT_STREQ(topology_name(TopologyKind::Ring), "ring");
    EXPECT_STREQ(topology_name(TopologyKind::DoubleRing), "double_ring");
    EXPECT_STREQ(topology_name(TopologyKind::Switched), "switched");
    EXPECT_STREQ(between_nodes_name(BetweenNodes::Nic), "nic");
    EXPECT_STREQ(between_nodes_name(BetweenNodes::SwitchTier), "switch_tier");
}

TEST(ProfileTest, DefaultProfileDirHonoursEnvironment) {
    const char* old = std::getenv("TANDEM_PROFILE_DIR");
    const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("TANDEM_PROFILE_DIR", "/some/where", 1);
    EXPECT_EQ(default_profile_dir(), fs::path("/some/where"));
    ::setenv("TANDEM_PROFILE_DIR", "", 1);  // empty means unset: the compiled-in default
    EXPECT_FALSE(default_profile_dir().empty());
    EXPECT_NE(default_profile_dir(), fs::path("/some/where"));
    if (saved) {
        ::setenv("TANDEM_PROFILE_DIR", saved->c_str(), 1);
    } else {
        ::unsetenv("TANDEM_PROFILE_DIR");
    }
}

// ---- malformed files ----

TEST(ProfileTest, UnmodifiedCopyLoads) {
    // Guards the table below: its failures must come from the mutation, not the base file.
    TempDir dir;
    const fs::path file = dir.path() / "Ascend910B1.toml";
    write_file(file, read_file(shipped_dir() / "Ascend910B1.toml"));
    EXPECT_EQ(load_error(file), std::nullopt);
}

TEST(ProfileTest, ZeroLatencyIsAllowed) {
    TempDir dir;
    const fs::path file = dir.path() / "Ascend910B1.toml";
    write_file(file, edited(read_file(shipped_dir() / "Ascend910B1.toml"), Edit::Replace, "link_latency_ns",
                            "link_latency_ns = { value = 0, source = \"test\" }"));
    EXPECT_EQ(load_error(file), std::nullopt);
}

struct BadCase {
    const char* label;
    Edit edit;
    const char* line_key;     // the line the edit applies to
    const char* replacement;  // the new text
    const char* file_stem;    // name the file is written under
    const char* key_in_msg;   // the key (or location) the message must name
    const char* problem;      // a fragment of the problem description
};

// The file is written as <file_stem>.toml; its loading must fail with a message naming the file,
// `key_in_msg` and `problem`.
const BadCase kBadCases[] = {
    {"syntax error", Edit::Replace, "aic_cores", "aic_cores = { value = 24, source = \"x\"",
     "Ascend910B1", ":", "syntax error"},
    {"duplicate key", Edit::InsertAfter, "[chip]", "aic_cores = { value = 1, source = \"x\" }",
     "Ascend910B1", ":", "syntax error"},
    {"missing key", Edit::Replace, "gm_to_ub_gib_s", "",
     "Ascend910B1", "pipes.gm_to_ub_gib_s", "missing key"},
    {"missing section", Edit::CutFrom, "[host]", "",
     "Ascend910B1", "host", "missing section"},
    {"unknown key", Edit::InsertAfter, "[pipes]", "gm_to_l2_gib_s = { value = 1, source = \"x\" }",
     "Ascend910B1", "pipes.gm_to_l2_gib_s", "unknown key"},
    {"unknown key in entry", Edit::Replace, "sync_us", "sync_us = { value = 5, source = \"x\", unit = \"us\" }",
     "Ascend910B1", "host.sync_us.unit", "unknown key"},
    {"unknown section", Edit::InsertAfter, "[host]", "[power]\ntdp_w = { value = 400, source = \"x\" }",
     "Ascend910B1", "power", "unknown section"},
    {"unknown meta key", Edit::InsertAfter, "[meta]", "vendor = \"x\"",
     "Ascend910B1", "meta.vendor", "unknown key"},
    {"float for an integer", Edit::Replace, "aic_cores", "aic_cores = { value = 24.0, source = \"x\" }",
     "Ascend910B1", "chip.aic_cores", "integer"},
    {"string for a number", Edit::Replace, "link_gb_s", "link_gb_s = { value = \"30\", source = \"x\" }",
     "Ascend910B1", "interconnect.link_gb_s", "number"},
    {"bare number", Edit::Replace, "l1_bytes", "l1_bytes = 524288",
     "Ascend910B1", "chip.l1_bytes", "inline table"},
    {"missing value", Edit::Replace, "l0a_bytes", "l0a_bytes = { source = \"x\" }",
     "Ascend910B1", "chip.l0a_bytes", "value"},
    {"missing source", Edit::Replace, "ub_to_gm_gib_s", "ub_to_gm_gib_s = { value = 188.46 }",
     "Ascend910B1", "pipes.ub_to_gm_gib_s", "source"},
    {"empty source", Edit::Replace, "ub_to_gm_gib_s", "ub_to_gm_gib_s = { value = 188.46, source = \"  \" }",
     "Ascend910B1", "pipes.ub_to_gm_gib_s", "empty"},
    {"unknown basis", Edit::Replace, "cube_fractal", "cube_fractal = { value = 16, source = \"x\", basis = \"guess\" }",
     "Ascend910B1", "pipes.cube_fractal", "basis"},
    {"negative bandwidth", Edit::Replace, "gm_to_l1_gib_s", "gm_to_l1_gib_s = { value = -135, source = \"x\" }",
     "Ascend910B1", "pipes.gm_to_l1_gib_s", "must be in [0.001, 1000000]"},
    {"zero clock", Edit::Replace, "core_clock_mhz", "core_clock_mhz = { value = 0, source = \"x\" }",
     "Ascend910B1", "chip.core_clock_mhz", "must be in [1, 100000] MHz"},
    {"infinite bandwidth", Edit::Replace, "link_gb_s", "link_gb_s = { value = inf, source = \"x\" }",
     "Ascend910B1", "interconnect.link_gb_s", "finite"},
    {"negative latency", Edit::Replace, "link_latency_ns", "link_latency_ns = { value = -1, source = \"x\" }",
     "Ascend910B1", "interconnect.link_latency_ns", "must be in [0, 1000000000] ns"},
    {"negative host time", Edit::Replace, "sync_us", "sync_us = { value = -0.5, source = \"x\" }",
     "Ascend910B1", "host.sync_us", "must be in [0, 1000000] us"},
    {"efficiency above one", Edit::Replace, "cube_efficiency", "cube_efficiency = { value = 1.5, source = \"x\" }",
     "Ascend910B1", "pipes.cube_efficiency", "must be in (0, 1]"},
    {"core count overflows int", Edit::Replace, "aic_cores", "aic_cores = { value = 9999999999, source = \"x\" }",
     "Ascend910B1", "chip.aic_cores", "must be in [1, 4096] cores"},
    // Values that describe no chip and would overflow the simulated clock or a derived rate.
    {"host time past a second", Edit::Replace, "launch_host_us", "launch_host_us = { value = 1e13, source = \"x\" }",
     "Ascend910B1", "host.launch_host_us", "must be in [0, 1000000] us"},
    {"latency past a second", Edit::Replace, "link_latency_ns", "link_latency_ns = { value = 1e300, source = \"x\" }",
     "Ascend910B1", "interconnect.link_latency_ns", "must be in [0, 1000000000] ns"},
    {"clock near zero", Edit::Replace, "core_clock_mhz", "core_clock_mhz = { value = 1e-300, source = \"x\" }",
     "Ascend910B1", "chip.core_clock_mhz", "must be in [1, 100000] MHz"},
    {"link rate near zero", Edit::Replace, "link_gb_s", "link_gb_s = { value = 1e-300, source = \"x\" }",
     "Ascend910B1", "interconnect.link_gb_s", "must be in [0.001, 1000000]"},
    {"vector width near zero", Edit::Replace, "vector_bytes_per_cycle",
     "vector_bytes_per_cycle = { value = 1e-300, source = \"x\" }", "Ascend910B1", "pipes.vector_bytes_per_cycle",
     "must be in [0.001, 1000000]"},
    {"more cores than a launch has blocks", Edit::Replace, "aiv_cores",
     "aiv_cores = { value = 100000000, source = \"x\" }", "Ascend910B1", "chip.aiv_cores", "must be in [1, 4096] cores"},
    {"poll past any wait", Edit::Replace, "twait_poll_cycles", "twait_poll_cycles = { value = 1e15, source = \"x\" }",
     "Ascend910B1", "pipes.twait_poll_cycles", "must be in [0, 1000000000] cycles"},
    // The task's own overheads are parts of the host's latencies around a kernel (sim/profile.hpp).
    {"task start past the launch latency", Edit::Replace, "task_start_us",
     "task_start_us = { value = 10.5, source = \"x\" }", "Ascend910B1", "host.task_start_us",
     "more than host.launch_to_start_us"},
    {"task end past the completion latency", Edit::Replace, "task_end_us",
     "task_end_us = { value = 3.5, source = \"x\" }", "Ascend910B1", "host.task_end_us",
     "more than host.kernel_end_us"},
    // A core's read requests in flight bound its reads by their latency: a depth needs a miss's latency.
    {"read requests without a miss latency", Edit::Replace, "hbm_miss_latency_cycles",
     "mte2_read_bytes_in_flight = { value = 8192, source = \"x\" }",
     "Ascend910B1", "pipes.hbm_miss_latency_cycles", "mte2_read_bytes_in_flight"},
    {"bad topology", Edit::Replace, "topology", "topology = { value = \"torus\", source = \"x\" }",
     "Ascend910B1", "interconnect.topology", "torus"},
    // The cluster's shape: the parts that go together.
    {"planes on a mesh", Edit::InsertAfter, "[interconnect]", "switch_planes = { value = 7, source = \"x\" }",
     "Ascend910B1", "interconnect.switch_planes", "only a switched topology"},
    {"package link with one die", Edit::InsertAfter, "[interconnect]", "package_link_gb_s = { value = 270, source = \"x\" }",
     "Ascend910B1", "interconnect.package_link_gb_s", "dies_per_package = 2"},
    {"NICs without a rate", Edit::Replace, "scale_out_gb_s", "",
     "Ascend910B1", "interconnect.scale_out_gb_s", "NIC's rate"},
    {"switch tier behind a mesh", Edit::Replace, "between_nodes", "between_nodes = { value = \"switch_tier\", source = \"x\" }",
     "Ascend910B1", "interconnect.scale_out_gb_s", "switch ports"},
    {"bad way between nodes", Edit::Replace, "between_nodes", "between_nodes = { value = \"pigeon\", source = \"x\" }",
     "Ascend910B1", "interconnect.between_nodes", "pigeon"},
    {"no nodes", Edit::Replace, "max_nodes", "max_nodes = { value = 0, source = \"x\" }",
     "Ascend910B1", "interconnect.max_nodes", "must be in [1, 4096]"},
    {"more ranks than the simulator holds", Edit::Replace, "max_nodes", "max_nodes = { value = 1000, source = \"x\" }",
     "Ascend910B1", "interconnect.max_nodes", "more than the 4096"},
    {"name stem mismatch", Edit::None, "", "",
     "Ascend910B9", "meta.name", "Ascend910B9"},
};

// Makes gtest name a failing case by its label instead of dumping its bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadProfileTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadProfileTest, IsRejectedWithFileAndKey) {
    const BadCase& c = GetParam();
    TempDir dir;
    const std::string text = edited(read_file(shipped_dir() / "Ascend910B1.toml"), c.edit, c.line_key, c.replacement);
    const fs::path file = dir.path() / (std::string(c.file_stem) + ".toml");
    write_file(file, text);

    const std::optional<std::string> msg = load_error(file);
    ASSERT_TRUE(msg.has_value()) << c.label << ": loaded without error";
    EXPECT_NE(msg->find(file.string()), std::string::npos) << *msg;
    EXPECT_NE(msg->find(c.key_in_msg), std::string::npos) << *msg;
    EXPECT_NE(msg->find(c.problem), std::string::npos) << *msg;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) { return identifier(info.param.label); }

INSTANTIATE_TEST_SUITE_P(Malformed, BadProfileTest, ::testing::ValuesIn(kBadCases), case_name);

TEST(ProfileTest, SyntaxErrorGivesLineAndColumn) {
    TempDir dir;
    const fs::path file = dir.path() / "Ascend910B1.toml";
    write_file(file, "[meta]\nname = \"Ascend910B1\"\ndescription = oops\n");
    const std::optional<std::string> msg = load_error(file);
    ASSERT_TRUE(msg.has_value());
    EXPECT_NE(msg->find(file.string() + ":3:"), std::string::npos) << *msg;
}

TEST(ProfileTest, MissingFileIsASimError) {
    TempDir dir;
    const std::optional<std::string> msg = load_error(dir.path() / "Ascend910B1.toml");
    ASSERT_TRUE(msg.has_value());
    EXPECT_NE(msg->find("Ascend910B1.toml"), std::string::npos) << *msg;
}

TEST(ProfileTest, UnknownSocInEmptyDirectory) {
    TempDir dir;
    try {
        load_profile_by_soc("Ascend910B1", dir.path());
        FAIL() << "expected SimError";
    } catch (const SimError& e) {
        EXPECT_NE(std::string(e.what()).find("(none)"), std::string::npos) << e.what();
    }
}

}  // namespace profile_test
}  // namespace tandem
