// Loading and validating hardware profiles (see sim/profile.hpp and sim/profiles/README.md).
//
// The checks are driven by one table, kFields, which lists every numeric field of the profile
// with its section, its name, its kind (derived from the C++ type of the member, so the two
// cannot disagree) and its allowed range. The same table decides which keys are known, so a
// field added to the struct and the table is parsed, validated and documented in one place.
#include "sim/profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <ranges>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <dlfcn.h>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "sim/sim_error.hpp"

#ifndef TANDEM_PROFILE_DIR
#define TANDEM_PROFILE_DIR "sim/profiles"
#endif

namespace tandem {
namespace {

namespace fs = std::filesystem;

enum class Kind { Integer, Real };

// Allowed values: [lo, hi], or (lo, hi] when lo is excluded. Counts, sizes, bandwidths and the
// clock are divisors in the cost model, so zero is rejected there; latencies and fixed costs may
// legitimately be zero. The upper (and the rates' lower) ends keep every figure the cost model
// derives (a latency in picoseconds, a byte's time on a link) far inside the simulated clock's
// range: a profile beyond them describes no chip, and would overflow the clock silently.
struct Range {
    double lo;
    bool lo_excluded;
    double hi;
    std::string_view unit;  // for messages
};
constexpr double kHugeBytes = 1125899906842624.0;  // 2^50: a PiB
constexpr Range kCores{1, false, 4096, "cores"};     // a launch defaults to one block per core, at most 4096
constexpr Range kBytes{1, false, kHugeBytes, "bytes"};
constexpr Range kRate{1e-3, false, 1e6, ""};         // GiB/s or GB/s: a kB/s to a PB/s
constexpr Range kClock{1, false, 1e5, "MHz"};
constexpr Range kPerCycle{1e-3, false, 1e6, ""};     // bytes per cycle
constexpr Range kCycles{0, false, 1e9, "cycles"};
constexpr Range kFractal{1, false, 1024, ""};
constexpr Range kUnit{0, true, 1, ""};               // an efficiency
constexpr Range kFactor{1e-3, false, 1e3, ""};       // a cost factor
constexpr Range kNs{0, false, 1e9, "ns"};            // up to a second
constexpr Range kUs{0, false, 1e6, "us"};            // up to a second
constexpr Range kPositiveNs{0, true, 1e9, "ns"};     // a divisor: a round trip that sets a rate
// The most ranks a cluster may have: Topology::kMaxRanks (sim/net/topology.hpp, a layer above this
// one, which refuses more again when it builds the routes).
constexpr int kMaxClusterRanks = 4096;
constexpr Range kCount{1, false, kMaxClusterRanks, ""};  // ranks per node, nodes
constexpr Range kPlanes{0, false, 64, ""};           // switch planes (0: not switched)
constexpr Range kDies{1, false, 2, ""};              // dies per package
constexpr Range kRateOrNone{0, false, 1e6, ""};      // an optional rate: 0 is none

// Where a field lives inside a Profile being filled in.
using Slot = std::variant<int*, std::int64_t*, double*>;

struct Field {
    std::string_view section;
    std::string_view name;
    Kind kind;
    Range range;
    Slot (*slot)(Profile&);
    // An optional field may be left out (it reads 0) or given as 0, meaning "none": the cluster
    // shape's parts that only some fabrics have (check_cluster_shape says which need them).
    bool optional = false;
};

// Builds a table row for member `Member` of sub-struct `Sub`; the kind follows the member's type.
template <auto Sub, auto Member>
constexpr Field field(std::string_view section, std::string_view name, Range range, bool optional = false) {
    using T = std::remove_cvref_t<decltype(std::declval<Profile&>().*Sub.*Member)>;
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>);
    return Field{section, name, std::is_integral_v<T> ? Kind::Integer : Kind::Real, range,
                 [](Profile& p) -> Slot { return &((p.*Sub).*Member); }, optional};
}
constexpr bool kOptional = true;

using C = ChipProfile;
using P = PipeProfile;
using I = InterconnectProfile;
using H = HostProfile;
constexpr auto kChip = &Profile::chip;
constexpr auto kPipes = &Profile::pipes;
constexpr auto kNet = &Profile::interconnect;
constexpr auto kHost = &Profile::host;

// Every numeric field of the profile. interconnect.topology (a string) is handled on its own.
constexpr std::array kFields{
    field<kChip, &C::aic_cores>("chip", "aic_cores", kCores),
    field<kChip, &C::aiv_cores>("chip", "aiv_cores", kCores),
    field<kChip, &C::core_clock_mhz>("chip", "core_clock_mhz", kClock),
    field<kChip, &C::l1_bytes>("chip", "l1_bytes", kBytes),
    field<kChip, &C::l0a_bytes>("chip", "l0a_bytes", kBytes),
    field<kChip, &C::l0b_bytes>("chip", "l0b_bytes", kBytes),
    field<kChip, &C::l0c_bytes>("chip", "l0c_bytes", kBytes),
    field<kChip, &C::ub_bytes>("chip", "ub_bytes", kBytes),
    field<kChip, &C::l2_bytes>("chip", "l2_bytes", kBytes),
    field<kChip, &C::gm_bytes>("chip", "gm_bytes", kBytes),
    field<kChip, &C::l2_region_bytes>("chip", "l2_region_bytes", kBytes),
    field<kChip, &C::l2_gib_s>("chip", "l2_gib_s", kRate),
    field<kChip, &C::hbm_gib_s>("chip", "hbm_gib_s", kRate),

    field<kPipes, &P::gm_to_l1_gib_s>("pipes", "gm_to_l1_gib_s", kRate),
    field<kPipes, &P::gm_to_ub_gib_s>("pipes", "gm_to_ub_gib_s", kRate),
    field<kPipes, &P::ub_to_gm_gib_s>("pipes", "ub_to_gm_gib_s", kRate),
    field<kPipes, &P::l1_to_l0a_gib_s>("pipes", "l1_to_l0a_gib_s", kRate),
    field<kPipes, &P::l1_to_l0b_gib_s>("pipes", "l1_to_l0b_gib_s", kRate),
    field<kPipes, &P::l0c_to_gm_gib_s>("pipes", "l0c_to_gm_gib_s", kRate),
    field<kPipes, &P::fix_l0c_read_gib_s>("pipes", "fix_l0c_read_gib_s", kRate),
    field<kPipes, &P::gm_access_latency_cycles>("pipes", "gm_access_latency_cycles", kCycles),
    field<kPipes, &P::hbm_miss_latency_cycles>("pipes", "hbm_miss_latency_cycles", kCycles, kOptional),
    field<kPipes, &P::mte2_read_bytes_in_flight>("pipes", "mte2_read_bytes_in_flight", kBytes, kOptional),
    field<kPipes, &P::mte1_latency_cycles>("pipes", "mte1_latency_cycles", kCycles),
    field<kPipes, &P::cube_fixed_cycles>("pipes", "cube_fixed_cycles", kCycles),
    field<kPipes, &P::cube_fractal>("pipes", "cube_fractal", kFractal),
    field<kPipes, &P::cube_efficiency>("pipes", "cube_efficiency", kUnit),
    field<kPipes, &P::cube_bf16_cost_factor>("pipes", "cube_bf16_cost_factor", kFactor),
    field<kPipes, &P::cube_int8_cost_factor>("pipes", "cube_int8_cost_factor", kFactor),
    field<kPipes, &P::cube_fp32_cost_factor>("pipes", "cube_fp32_cost_factor", kFactor),
    field<kPipes, &P::vector_bytes_per_cycle>("pipes", "vector_bytes_per_cycle", kPerCycle),
    field<kPipes, &P::vector_startup_cycles>("pipes", "vector_startup_cycles", kCycles),
    field<kPipes, &P::vector_transcendental_cost_factor>("pipes", "vector_transcendental_cost_factor", kFactor),
    field<kPipes, &P::vector_sort_cycles_per_element>("pipes", "vector_sort_cycles_per_element", kCycles),
    field<kPipes, &P::scalar_issue_cycles>("pipes", "scalar_issue_cycles", kCycles),
    field<kPipes, &P::set_flag_cycles>("pipes", "set_flag_cycles", kCycles),
    field<kPipes, &P::wait_flag_cycles>("pipes", "wait_flag_cycles", kCycles),
    field<kPipes, &P::pipe_barrier_cycles>("pipes", "pipe_barrier_cycles", kCycles),
    field<kPipes, &P::twait_poll_cycles>("pipes", "twait_poll_cycles", kCycles),
    field<kPipes, &P::cross_core_flag_latency_cycles>("pipes", "cross_core_flag_latency_cycles", kCycles),
    field<kPipes, &P::cluster_port_bytes>("pipes", "cluster_port_bytes", kBytes, kOptional),
    field<kPipes, &P::cluster_port_sample_ns>("pipes", "cluster_port_sample_ns", kNs, kOptional),

    field<kNet, &I::ranks_per_node>("interconnect", "ranks_per_node", kCount),
    field<kNet, &I::max_nodes>("interconnect", "max_nodes", kCount),
    field<kNet, &I::switch_planes>("interconnect", "switch_planes", kPlanes, kOptional),
    field<kNet, &I::link_gb_s>("interconnect", "link_gb_s", kRate),
    field<kNet, &I::link_latency_ns>("interconnect", "link_latency_ns", kNs),
    field<kNet, &I::dies_per_package>("interconnect", "dies_per_package", kDies),
    field<kNet, &I::package_link_gb_s>("interconnect", "package_link_gb_s", kRateOrNone, kOptional),
    field<kNet, &I::package_link_latency_ns>("interconnect", "package_link_latency_ns", kNs, kOptional),
    field<kNet, &I::scale_out_gb_s>("interconnect", "scale_out_gb_s", kRateOrNone, kOptional),
    field<kNet, &I::scale_out_latency_ns>("interconnect", "scale_out_latency_ns", kNs),
    field<kNet, &I::remote_store_gib_s>("interconnect", "remote_store_gib_s", kRate),
    field<kNet, &I::remote_store_burst_ns>("interconnect", "remote_store_burst_ns", kNs),
    field<kNet, &I::remote_read_window_bytes>("interconnect", "remote_read_window_bytes", kBytes),
    field<kNet, &I::remote_write_window_bytes>("interconnect", "remote_write_window_bytes", kBytes, kOptional),
    field<kNet, &I::write_payload_share>("interconnect", "write_payload_share", kUnit, kOptional),
    field<kNet, &I::read_payload_share>("interconnect", "read_payload_share", kUnit, kOptional),
    field<kNet, &I::remote_read_round_trip_ns>("interconnect", "remote_read_round_trip_ns", kPositiveNs),
    field<kNet, &I::sdma_gib_s>("interconnect", "sdma_gib_s", kRate),
    field<kNet, &I::sdma_latency_ns>("interconnect", "sdma_latency_ns", kNs),
    field<kNet, &I::remote_atomic_latency_ns>("interconnect", "remote_atomic_latency_ns", kNs),
    field<kNet, &I::local_atomic_latency_ns>("interconnect", "local_atomic_latency_ns", kNs),

    field<kHost, &H::launch_host_us>("host", "launch_host_us", kUs),
    field<kHost, &H::launch_to_start_us>("host", "launch_to_start_us", kUs),
    field<kHost, &H::kernel_end_us>("host", "kernel_end_us", kUs),
    field<kHost, &H::task_start_us>("host", "task_start_us", kUs),
    field<kHost, &H::task_end_us>("host", "task_end_us", kUs),
    field<kHost, &H::sync_us>("host", "sync_us", kUs),
    field<kHost, &H::host_barrier_us>("host", "host_barrier_us", kUs),
    field<kHost, &H::host_write_latency_us>("host", "host_write_latency_us", kUs),
};

constexpr std::array<std::string_view, 4> kDataSections{"chip", "pipes", "interconnect", "host"};
constexpr std::array<std::string_view, 3> kMetaKeys{"name", "description", "derives_from"};
constexpr int kMaxDerivationDepth = 8;  // a chain longer than this is a loop or a mistake
constexpr std::array<std::string_view, 3> kEntryKeys{"value", "source", "basis"};
constexpr std::array<std::string_view, 5> kBases{"official", "fitted", "third-party", "calibrated", "assumed"};
constexpr std::string_view kTopologyKey = "topology";
constexpr std::array<std::pair<std::string_view, TopologyKind>, 4> kTopologies{{
    {"full_mesh", TopologyKind::FullMesh},
    {"ring", TopologyKind::Ring},
    {"double_ring", TopologyKind::DoubleRing},
    {"switched", TopologyKind::Switched},
}};
constexpr std::string_view kBetweenNodesKey = "between_nodes";
constexpr std::array<std::pair<std::string_view, BetweenNodes>, 2> kBetweenNodes{{
    {"nic", BetweenNodes::Nic},
    {"switch_tier", BetweenNodes::SwitchTier},
}};

template <typename Names>
bool contains(const Names& names, std::string_view name) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

template <typename Names>
std::string join(const Names& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

bool is_known_key(std::string_view section, std::string_view key) {
    if (section == "meta") return contains(kMetaKeys, key);
    if (section == "interconnect" && (key == kTopologyKey || key == kBetweenNodesKey)) return true;
    return std::any_of(kFields.begin(), kFields.end(),
                       [&](const Field& f) { return f.section == section && f.name == key; });
}

std::string_view type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a float";
        case toml::node_type::boolean: return "a boolean";
        case toml::node_type::date: return "a date";
        case toml::node_type::time: return "a time";
        case toml::node_type::date_time: return "a date-time";
        default: return "nothing";
    }
}

// Carries the file path so that every error names it without threading it through each call.
class Reader {
public:
    explicit Reader(fs::path file) : file_(std::move(file)) {}

    [[noreturn]] void fail(std::string_view key, std::string_view problem) const {
        throw SimError(fmt::format("profile {}: {}: {}", file_.string(), key, problem));
    }

    toml::table parse() const;
    void check_known_keys(const toml::table& root) const;
    void read_meta(const toml::table& root, Profile& out) const;
    void read_field(const toml::table& root, const Field& f, Profile& out) const;
    template <typename Kind, std::size_t N>
    Kind read_name(const toml::table& root, std::string_view name,
                   const std::array<std::pair<std::string_view, Kind>, N>& names, std::string_view what) const;
    void check_cluster_shape(const InterconnectProfile& net) const;

private:
    void check_entry_keys(const toml::node& entry_node, std::string_view key) const;
    const toml::table& section(const toml::table& root, std::string_view name) const;
    const toml::table& entry(const toml::table& sec, std::string_view name, std::string_view key) const;
    void check_source(const toml::table& e, std::string_view key) const;
    double number(const toml::node& v, const Field& f, std::string_view key) const;

    fs::path file_;
};

toml::table Reader::parse() const {
    std::error_code ec;
    if (!fs::is_regular_file(file_, ec)) {
        throw SimError(fmt::format("profile {}: file not found or not a regular file", file_.string()));
    }
    try {
        return toml::parse_file(file_.string());
    } catch (const toml::parse_error& e) {
        const auto& where = e.source().begin;
        throw SimError(fmt::format("profile {}:{}:{}: TOML syntax error: {}", file_.string(), where.line,
                                   where.column, e.description()));
    }
}

// Rejects unknown sections and keys first, so that a misspelt key is reported as such rather
// than as the "missing key" it causes for the correct spelling.
void Reader::check_known_keys(const toml::table& root) const {
    for (const auto& [sec_key, sec_node] : root) {
        const std::string_view sec = sec_key.str();
        if (sec != "meta" && !contains(kDataSections, sec)) {
            fail(sec, fmt::format("unknown section (expected: meta, {})", join(kDataSections)));
        }
        const toml::table* table = sec_node.as_table();
        if (table == nullptr) fail(sec, fmt::format("expected a section (table), got {}", type_name(sec_node)));
        for (const auto& [key, node] : *table) {
            const std::string full = fmt::format("{}.{}", sec, key.str());
            if (!is_known_key(sec, key.str())) fail(full, "unknown key");
            if (sec != "meta") check_entry_keys(node, full);
        }
    }
}

void Reader::check_entry_keys(const toml::node& entry_node, std::string_view key) const {
    const toml::table* e = entry_node.as_table();
    if (e == nullptr) return;  // reported with the entry's other checks in entry()
    for (const auto& [inner, unused] : *e) {
        if (!contains(kEntryKeys, inner.str())) {
            fail(fmt::format("{}.{}", key, inner.str()),
                 fmt::format("unknown key in entry (allowed: {})", join(kEntryKeys)));
        }
    }
}

const toml::table& Reader::section(const toml::table& root, std::string_view name) const {
    const toml::node* node = root.get(name);
    if (node == nullptr) fail(name, "missing section");
    const toml::table* table = node->as_table();
    if (table == nullptr) fail(name, fmt::format("expected a section (table), got {}", type_name(*node)));
    return *table;
}

// An entry is `{ value = ..., source = "...", basis = "..." }`; returns it after checking that
// it exists, is a table, and has a value and a source. `name` is the key inside the section,
// `key` the full dotted key used in messages.
const toml::table& Reader::entry(const toml::table& sec, std::string_view name, std::string_view key) const {
    const toml::node* node = sec.get(name);
    if (node == nullptr) fail(key, "missing key");
    const toml::table* e = node->as_table();
    if (e == nullptr) {
        fail(key, fmt::format("expected an inline table {{ value = ..., source = \"...\" }}, got {}",
                              type_name(*node)));
    }
    if (e->get("value") == nullptr) fail(key, "entry has no 'value'");
    check_source(*e, key);
    return *e;
}

// Every number must say where it came from; this is what makes a profile reviewable.
void Reader::check_source(const toml::table& e, std::string_view key) const {
    const toml::node* source = e.get("source");
    if (source == nullptr) fail(key, "entry has no 'source' (every value must cite where it came from)");
    const auto text = source->value<std::string_view>();
    if (!text) fail(key, fmt::format("'source' must be a string, got {}", type_name(*source)));
    if (text->find_first_not_of(" \t\r\n") == std::string_view::npos) fail(key, "'source' is empty");
    if (const toml::node* basis = e.get("basis")) {
        const auto b = basis->value<std::string_view>();
        if (!b) fail(key, fmt::format("'basis' must be a string, got {}", type_name(*basis)));
        if (!contains(kBases, *b)) fail(key, fmt::format("unknown basis '{}' (expected one of: {})", *b, join(kBases)));
    }
}

void Reader::read_meta(const toml::table& root, Profile& out) const {
    const toml::table& meta = section(root, "meta");
    auto text = [&](std::string_view key) {
        const std::string full = fmt::format("meta.{}", key);
        const toml::node* node = meta.get(key);
        if (node == nullptr) fail(full, "missing key");
        const auto s = node->value<std::string>();
        if (!s) fail(full, fmt::format("expected a string, got {}", type_name(*node)));
        return *s;
    };
    out.name = text("name");
    out.description = text("description");
    // The file name is how a profile is found (load_profile_by_soc), so it must agree with the
    // name the profile reports, or a renamed copy would silently pose as another SoC.
    const std::string stem = file_.stem().string();
    if (out.name != stem) fail("meta.name", fmt::format("'{}' does not match the file name '{}'", out.name, stem));
}

double Reader::number(const toml::node& v, const Field& f, std::string_view key) const {
    if (f.kind == Kind::Integer) {
        if (!v.is_integer()) fail(key, fmt::format("'value' must be an integer, got {}", type_name(v)));
        return static_cast<double>(v.as_integer()->get());
    }
    if (v.is_integer()) return static_cast<double>(v.as_integer()->get());
    if (!v.is_floating_point()) fail(key, fmt::format("'value' must be a number, got {}", type_name(v)));
    const double d = v.as_floating_point()->get();
    if (!std::isfinite(d)) fail(key, fmt::format("'value' must be finite, got {}", d));
    return d;
}

bool in_range(double v, const Range& r) { return (r.lo_excluded ? v > r.lo : v >= r.lo) && v <= r.hi; }

std::string range_text(const Range& r) {
    return fmt::format("must be in {}{}, {}]{}", r.lo_excluded ? "(" : "[", r.lo, r.hi,
                       r.unit.empty() ? "" : fmt::format(" {}", r.unit));
}

void Reader::read_field(const toml::table& root, const Field& f, Profile& out) const {
    const std::string key = fmt::format("{}.{}", f.section, f.name);
    if (f.optional && section(root, f.section).get(f.name) == nullptr) return;  // none: stays 0
    const toml::table& e = entry(section(root, f.section), f.name, key);
    const toml::node& v = *e.get("value");
    const double value = number(v, f, key);
    if (!in_range(value, f.range)) fail(key, fmt::format("{}, got {}", range_text(f.range), value));
    // Integers are read exactly from the node, not through the double above, so that large
    // byte counts keep every bit; int fields also have to fit in an int.
    std::visit(
        [&](auto* target) {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, double>) {
                *target = value;
            } else {
                const std::int64_t i = v.as_integer()->get();
                if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max()) {
                    fail(key, fmt::format("{} does not fit in the field", i));
                }
                *target = static_cast<T>(i);
            }
        },
        f.slot(out));
}

template <typename Kind, std::size_t N>
Kind Reader::read_name(const toml::table& root, std::string_view name,
                       const std::array<std::pair<std::string_view, Kind>, N>& names, std::string_view what) const {
    const std::string key = fmt::format("interconnect.{}", name);
    const toml::table& e = entry(section(root, "interconnect"), name, key);
    const toml::node& v = *e.get("value");
    const auto text = v.value<std::string_view>();
    if (!text) fail(key, fmt::format("'value' must be a string, got {}", type_name(v)));
    for (const auto& [known, kind] : names) {
        if (known == *text) return kind;
    }
    fail(key, fmt::format("unknown {} '{}' (expected one of: {})", what, *text, join(names | std::views::keys)));
}

// The parts of a cluster's shape that go together: switch planes only on a switched node, a
// package link only with two dies a package, a NIC rate only between nodes joined by NICs.
void Reader::check_cluster_shape(const InterconnectProfile& net) const {
    const bool switched = net.topology == TopologyKind::Switched;
    if (switched && net.switch_planes < 1) fail("interconnect.switch_planes", "a switched topology needs at least 1 plane");
    if (!switched && net.switch_planes != 0) {
        fail("interconnect.switch_planes", fmt::format("only a switched topology has planes (this one is {})",
                                                       topology_name(net.topology)));
    }
    const bool pair = net.dies_per_package == 2;
    for (const auto& [name, value] : {std::pair{"package_link_gb_s", net.package_link_gb_s},
                                      std::pair{"package_link_latency_ns", net.package_link_latency_ns}}) {
        if (!pair && value != 0) fail(fmt::format("interconnect.{}", name), "only dies_per_package = 2 has a package link");
    }
    if (pair && net.package_link_gb_s <= 0) fail("interconnect.package_link_gb_s", "dies_per_package = 2 needs the package link's rate");
    if (pair && net.ranks_per_node % 2 != 0) {
        fail("interconnect.ranks_per_node", fmt::format("{} ranks per node cannot hold whole packages of 2 dies", net.ranks_per_node));
    }
    const bool nic = net.between_nodes == BetweenNodes::Nic;
    if (nic && net.scale_out_gb_s <= 0 && net.max_nodes > 1) {
        fail("interconnect.scale_out_gb_s", "nodes joined by NICs need the NIC's rate");
    }
    if (!nic && net.scale_out_gb_s != 0) {
        fail("interconnect.scale_out_gb_s", "a switch tier is reached through the node's switch ports: give 0 (none)");
    }
    if (!nic && !switched) fail("interconnect.between_nodes", "a switch tier needs a switched topology inside the node");
    const std::int64_t most = std::int64_t{net.ranks_per_node} * net.max_nodes;
    if (most > kMaxClusterRanks) {
        fail("interconnect.max_nodes", fmt::format("{} nodes of {} ranks is {} ranks, more than the {} the simulator holds",
                                                   net.max_nodes, net.ranks_per_node, most, kMaxClusterRanks));
    }
}

// Reads a profile file's table and, when it derives from another profile, lays it over that
// one's (entry by entry: a derived profile states only what differs). The base is looked up
// beside the file first, then among the shipped profiles.
toml::table read_layered(const fs::path& file, int depth) {
    const Reader reader(file);
    toml::table root = reader.parse();
    reader.check_known_keys(root);
    const toml::table* meta = root["meta"].as_table();
    const toml::node* base_node = meta != nullptr ? meta->get("derives_from") : nullptr;
    if (base_node == nullptr) return root;
    const auto base_name = base_node->value<std::string>();
    if (!base_name || base_name->empty()) reader.fail("meta.derives_from", "expected the name of a profile");
    if (depth >= kMaxDerivationDepth) {
        reader.fail("meta.derives_from", fmt::format("more than {} profiles derive from one another (a loop?)", kMaxDerivationDepth));
    }
    fs::path base_file = file.parent_path() / (*base_name + ".toml");
    std::error_code ec;
    if (!fs::is_regular_file(base_file, ec)) base_file = default_profile_dir() / (*base_name + ".toml");
    if (!fs::is_regular_file(base_file, ec)) {
        reader.fail("meta.derives_from", fmt::format("no profile '{}' beside it or in {}", *base_name, default_profile_dir().string()));
    }
    toml::table merged = read_layered(base_file, depth + 1);
    for (const auto& [sec_key, sec_node] : root) {
        if (sec_key.str() == "meta") continue;
        toml::table* target = merged[sec_key.str()].as_table();
        if (target == nullptr) {
            merged.insert_or_assign(sec_key.str(), *sec_node.as_table());
            continue;
        }
        for (const auto& [key, node] : *sec_node.as_table()) target->insert_or_assign(key.str(), node);
    }
    merged.insert_or_assign("meta", *meta);  // the derived profile's own name and description
    return merged;
}

}  // namespace

Profile load_profile(const std::filesystem::path& file) {
    const Reader reader(file);
    const toml::table root = read_layered(file, 0);
    Profile profile;
    profile.file = file;
    reader.read_meta(root, profile);
    if (const auto base = root["meta"]["derives_from"].value<std::string>()) profile.derives_from = *base;
    for (const Field& f : kFields) reader.read_field(root, f, profile);
    profile.interconnect.topology = reader.read_name(root, kTopologyKey, kTopologies, "topology");
    profile.interconnect.between_nodes = reader.read_name(root, kBetweenNodesKey, kBetweenNodes, "way between nodes");
    reader.check_cluster_shape(profile.interconnect);
    // A cluster's port weighs what its AIVs held over a sample before each load: no sample, no weight.
    if (profile.pipes.cluster_port_bytes > 0 && profile.pipes.cluster_port_sample_ns <= 0) {
        reader.fail("pipes.cluster_port_sample_ns", fmt::format("must be above 0 ns when pipes.cluster_port_bytes is given ({} bytes)",
                                                                 profile.pipes.cluster_port_bytes));
    }
    // A core's requests in flight bound its reads by their latency: a depth needs the miss's latency.
    if (profile.pipes.mte2_read_bytes_in_flight > 0 && profile.pipes.hbm_miss_latency_cycles <= 0) {
        reader.fail("pipes.hbm_miss_latency_cycles",
                    fmt::format("must be above 0 cycles when pipes.mte2_read_bytes_in_flight is given ({} bytes)",
                                profile.pipes.mte2_read_bytes_in_flight));
    }
    // The task's own overheads are parts of the host's latencies around a kernel, not additions.
    if (profile.host.task_start_us > profile.host.launch_to_start_us) {
        reader.fail("host.task_start_us", fmt::format("{} us is more than host.launch_to_start_us ({} us), which holds it",
                                                      profile.host.task_start_us, profile.host.launch_to_start_us));
    }
    if (profile.host.task_end_us > profile.host.kernel_end_us) {
        reader.fail("host.task_end_us", fmt::format("{} us is more than host.kernel_end_us ({} us), which holds it",
                                                    profile.host.task_end_us, profile.host.kernel_end_us));
    }
    return profile;
}

Profile load_profile_by_soc(const std::string& soc, const std::filesystem::path& profile_dir) {
    std::error_code ec;
    if (!fs::is_directory(profile_dir, ec)) {
        throw SimError(fmt::format("unknown SoC '{}': profile directory {} does not exist", soc,
                                   profile_dir.string()));
    }
    // A SoC name is a bare file stem; anything with a path in it could escape the directory.
    const bool plain = !soc.empty() && soc.find_first_of("/\\") == std::string::npos && soc != "." && soc != "..";
    const fs::path file = profile_dir / (soc + ".toml");
    if (plain && fs::is_regular_file(file, ec)) return load_profile(file);

    std::set<std::string> available;  // sorted, so the message is the same on every host
    for (const auto& de : fs::directory_iterator(profile_dir, ec)) {
        if (de.path().extension() == ".toml") available.insert(de.path().stem().string());
    }
    throw SimError(fmt::format("unknown SoC '{}': profiles available in {}: {}", soc, profile_dir.string(),
                               available.empty() ? std::string("(none)") : join(available)));
}

namespace {

// The profiles installed beside the library this code is linked into (`cmake --install`:
// <prefix>/lib/libtandem_api.so finds <prefix>/share/tandem/profiles); empty when there are none
// there (a program or a library run from the build tree).
std::filesystem::path installed_profile_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&installed_profile_dir), &info) == 0 || info.dli_fname == nullptr) return {};
    std::error_code ec;
    const std::filesystem::path dir =
        std::filesystem::path(info.dli_fname).parent_path() / TANDEM_PROFILE_DIR_FROM_LIBRARY;
    return std::filesystem::is_directory(dir, ec) ? dir.lexically_normal() : std::filesystem::path();
}

}  // namespace

std::filesystem::path default_profile_dir() {
    const char* env = std::getenv("TANDEM_PROFILE_DIR");
    if (env != nullptr && *env != '\0') return env;
    if (std::filesystem::path installed = installed_profile_dir(); !installed.empty()) return installed;
    return TANDEM_PROFILE_DIR;
}

const char* topology_name(TopologyKind kind) {
    for (const auto& [name, k] : kTopologies) {
        if (k == kind) return name.data();  // the literals above are NUL-terminated
    }
    return "unknown";
}

const char* between_nodes_name(BetweenNodes kind) {
    for (const auto& [name, k] : kBetweenNodes) {
        if (k == kind) return name.data();
    }
    return "unknown";
}

int cluster_max_ranks(const InterconnectProfile& net) { return net.ranks_per_node * net.max_nodes; }

}  // namespace tandem
