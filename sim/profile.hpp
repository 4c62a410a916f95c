#pragma once
// The hardware profile: every number the timing model uses, loaded from a TOML file in
// sim/profiles/. Field names carry their units. Nothing numeric about the machine is written
// as a literal in code; it is read from here. See sim/profiles/README.md for the file format.
#include <cstdint>
#include <filesystem>
#include <string>

namespace tandem {

// The fabric inside a node: every pair of ranks on its own link (the A2 server's HCCS mesh), one
// or two rings of links, or every rank on the node's switch planes (the A3 node's HCCS switches).
enum class TopologyKind { FullMesh, Ring, DoubleRing, Switched };

// What joins the nodes: each rank's own NIC (RoCE between A2 servers), or a second switch tier
// reached through the same ports as the node's own switches (CloudMatrix384).
enum class BetweenNodes { Nic, SwitchTier };

struct ChipProfile {
    int aic_cores = 0;                   // cube cores per chip
    int aiv_cores = 0;                   // vector cores per chip
    double core_clock_mhz = 0;           // AIC/AIV clock
    std::int64_t l1_bytes = 0;           // per AIC
    std::int64_t l0a_bytes = 0;          // per AIC
    std::int64_t l0b_bytes = 0;          // per AIC
    std::int64_t l0c_bytes = 0;          // per AIC
    std::int64_t ub_bytes = 0;           // per AIV, usable (reserved part already removed)
    std::int64_t l2_bytes = 0;           // per chip: what the L2 holds (sim/mem/chip_memory.hpp)
    std::int64_t l2_region_bytes = 0;    // the granularity L2 residency is tracked at (a model choice)
    std::int64_t gm_bytes = 0;           // HBM capacity per chip
    double l2_gib_s = 0;                 // L2 bandwidth shared by everything that touches the chip's GM
    double hbm_gib_s = 0;                // HBM bandwidth behind it (misses and write-backs)
};

struct PipeProfile {
    // Per-core bandwidth of each data path.
    double gm_to_l1_gib_s = 0;           // MTE2 on AIC
    double gm_to_ub_gib_s = 0;           // MTE2 on AIV
    double ub_to_gm_gib_s = 0;           // MTE3 on AIV (local GM)
    double l1_to_l0a_gib_s = 0;          // MTE1
    double l1_to_l0b_gib_s = 0;          // MTE1
    double l0c_to_gm_gib_s = 0;          // FIX: L0C -> GM, what the store's write takes
    double fix_l0c_read_gib_s = 0;       // FIX's own work: reading L0C and converting its layout (its busy time)
    // Fixed start-up cost of one instruction on each path, in core cycles.
    double gm_access_latency_cycles = 0; // MTE2/MTE3/FIX touching GM (L2 hit)
    // One core's local reads as requests in flight (sim/mem/read_requests.hpp): each returns an L2
    // hit's latency (gm_access_latency_cycles) after it leaves, plus hbm_miss_latency_cycles when
    // it misses, so a core reads at most mte2_read_bytes_in_flight / their mean latency
    // (0: no bound but the path's rate).
    double hbm_miss_latency_cycles = 0;
    std::int64_t mte2_read_bytes_in_flight = 0;
    double mte1_latency_cycles = 0;
    // Cube: cost = cube_fixed_cycles + ceil(m/f)*ceil(k/f)*ceil(n/f) / cube_efficiency.
    double cube_fixed_cycles = 0;
    int cube_fractal = 0;                // f: the cube does one f x f x f fp16 product per cycle
    double cube_efficiency = 0;          // calibration: sustained share of that rate
    double cube_bf16_cost_factor = 0;    // a bf16 product's fractal term relative to fp16's
    double cube_int8_cost_factor = 0;    // an int8 x int8 -> int32 product's fractal term relative to fp16's
    double cube_fp32_cost_factor = 0;    // an fp32 x fp32 -> fp32 product's fractal term relative to fp16's
    // Vector unit (PIPE_V, AIV): cost = vector_startup_cycles + ceil(bytes / vector_bytes_per_cycle)
    // cycles, bytes counted over the widest operand (one repeat of 256 bytes per cycle on Ascend).
    double vector_bytes_per_cycle = 0;
    double vector_startup_cycles = 0;
    // Exp and divide (TEXP, TDIV) cost this many times an add's per-byte term.
    double vector_transcendental_cost_factor = 0;
    // The sort unit (TSORT's block sort and merge rounds, TMRGSORT): cycles per element (a key
    // with its payload) per pass, beside vector_startup_cycles. A merge picks one element at a
    // time, so its pass costs per element, not per 256-byte repeat.
    double vector_sort_cycles_per_element = 0;
    // Scalar unit and intra-core synchronisation.
    double scalar_issue_cycles = 0;      // scalar cost of dispatching one instruction
    double set_flag_cycles = 0;
    double wait_flag_cycles = 0;
    double pipe_barrier_cycles = 0;
    double twait_poll_cycles = 0;        // one pass of the TWAIT spin loop
    // Cross-core flags of one cluster (FFTS CrossCoreSetFlag/WaitFlag): set -> visible at the target.
    double cross_core_flag_latency_cycles = 0;
    // A cluster's port (AIC c with AIV 2c, 2c + 1), shared by the AIC's GM -> L1 loads and the
    // bytes its AIVs hold in remote reads: the AIC loads at gm_to_l1 x P / (P + held), held the
    // AIVs' mean over the cluster_port_sample_ns before the load's issue (0: no shared port).
    std::int64_t cluster_port_bytes = 0;
    double cluster_port_sample_ns = 0;
};

// The cluster's shape and its fabrics (sim/net/topology.hpp builds the routes from it).
struct InterconnectProfile {
    TopologyKind topology = TopologyKind::FullMesh;  // the fabric inside a node
    int ranks_per_node = 0;              // chips (A2 server) or dies (A3 node) in one node
    int max_nodes = 0;                   // the most nodes the cluster has: a run of more ranks is refused
    int switch_planes = 0;               // Switched: planes a rank has one port on (0 otherwise)
    double link_gb_s = 0;                // per link, or per switch plane port, per direction, decimal GB/s
    double link_latency_ns = 0;          // one hop: a link, or a switch plane from port to port
    int dies_per_package = 0;            // 2: each die has a direct link to its package partner
    double package_link_gb_s = 0;        // that link (SIO), per direction (dies_per_package 2 only)
    double package_link_latency_ns = 0;  // its latency (dies_per_package 2 only)
    BetweenNodes between_nodes = BetweenNodes::Nic;
    double scale_out_gb_s = 0;           // Nic: one rank's NIC, per direction (0 with SwitchTier)
    double scale_out_latency_ns = 0;     // what crossing nodes adds to a route's latency
    double remote_store_gib_s = 0;       // one core's MTE3 rate into a peer's GM, within a burst
    double remote_store_burst_ns = 0;    // what each contiguous run (burst) of a remote store adds
    // One core's remote reads (MTE2 from a peer's GM): the bytes of read requests it keeps in
    // flight, each held for a read's round trip; its rate is their ratio (sim/MODEL.md).
    std::int64_t remote_read_window_bytes = 0;
    double remote_read_round_trip_ns = 0;  // a read request out and its data back, inside a node
    // The share of a route's rate that carries a write's (a read's) payload, the rest the
    // protocol's (optional; 1: all of it): a transfer books bytes / share on its route's links.
    double write_payload_share = 1.0;
    double read_payload_share = 1.0;
    // One core's remote stores posted (optional; 0: not): the bytes of write requests it keeps in
    // flight, each held for a request's round trip (remote_read_round_trip_ns). Given, a store's
    // MTE3 is free once its last byte has left, at most window / round trip, and its bytes land a
    // route's latency later; absent, the MTE3 is held until they land (sim/MODEL.md).
    std::int64_t remote_write_window_bytes = 0;
    double sdma_gib_s = 0;               // the SDMA engine's rate for one TGET_ASYNC (peer GM -> local GM)
    double sdma_latency_ns = 0;          // a TGET_ASYNC's issue to its first byte moving (descriptor, doorbell)
    double remote_atomic_latency_ns = 0; // TNOTIFY to a peer: issue to visible
    double local_atomic_latency_ns = 0;  // TNOTIFY to own GM: issue to visible to other cores
};

struct HostProfile {
    double launch_host_us = 0;           // host time spent in one kernel launch call
    double launch_to_start_us = 0;       // launch call to first block starting on the device
    double kernel_end_us = 0;            // last block done to kernel seen complete by the stream
    // The profiler's task duration (msprof's Task Duration) holds more than the blocks' span:
    // of launch_to_start_us, the part after the task starts on the device (dispatching it to the
    // cores, the blocks' start, the kernel's scalar preamble and set-up), and of kernel_end_us,
    // the part before the task ends (the final synchronisation of the cores' completion).
    double task_start_us = 0;            // within launch_to_start_us
    double task_end_us = 0;              // within kernel_end_us
    double sync_us = 0;                  // stream synchronize return latency
    double host_barrier_us = 0;          // host barrier across ranks
    double host_write_latency_us = 0;    // host write to device memory until visible
};

struct Profile {
    std::string name;                    // SoC name, e.g. "Ascend910B1"
    std::string description;
    std::string derives_from;            // the profile this one states its differences from ("" if none)
    std::filesystem::path file;          // where it was loaded from
    ChipProfile chip;
    PipeProfile pipes;
    InterconnectProfile interconnect;
    HostProfile host;
};

// Loads and validates a profile file. Throws SimError naming the file, the key and the problem
// for a malformed file, a missing or unknown key, a value of the wrong type or out of range,
// or an entry without its source.
Profile load_profile(const std::filesystem::path& file);

// Finds `<soc>.toml` in `profile_dir` and loads it; the error lists the profiles available.
Profile load_profile_by_soc(const std::string& soc, const std::filesystem::path& profile_dir);

// The directory holding the shipped profiles: $TANDEM_PROFILE_DIR when set; else, for an installed
// library, the profiles installed with it (<prefix>/share/tandem/profiles); else the source
// tree's sim/profiles (set by CMake).
std::filesystem::path default_profile_dir();

const char* topology_name(TopologyKind kind);
const char* between_nodes_name(BetweenNodes kind);

// The most ranks the profile's cluster holds: ranks_per_node x max_nodes.
int cluster_max_ranks(const InterconnectProfile& net);

}  // namespace tandem
