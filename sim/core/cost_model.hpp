#pragma once
// The profile's numbers turned into the units the hot path wants (picoseconds, bytes per
// second), computed once per run. Holds no number of its own.
#include <cstdint>

#include "sim/mem/dtype.hpp"
#include "sim/mem/read_requests.hpp"
#include "sim/profile.hpp"
#include "sim/sim_time.hpp"

namespace tandem {

struct CostModel {
    explicit CostModel(const Profile& p);

    double clock_mhz;
    SimTime issue_ps;           // scalar dispatch of one instruction
    SimTime set_flag_ps;
    SimTime wait_flag_ps;
    SimTime pipe_barrier_ps;
    SimTime twait_poll_ps;
    SimTime gm_latency_ps;      // MTE2/MTE3/FIX start-up when touching GM
    SimTime mte1_latency_ps;
    double cube_fixed_cycles;
    int cube_fractal;
    double cube_efficiency;
    double cube_bf16_factor;
    double cube_int8_factor;
    double cube_fp32_factor;
    double vector_transcendental_factor;
    double vector_sort_cycles_per_element;
    double vector_bytes_per_cycle;
    double vector_startup_cycles;
    SimTime cross_core_flag_ps;
    std::int64_t gm_to_l1_bps;  // bytes per second
    std::int64_t gm_to_ub_bps;
    std::int64_t ub_to_gm_bps;
    std::int64_t l1_to_l0a_bps;
    std::int64_t l1_to_l0b_bps;
    std::int64_t l0c_to_gm_bps;
    std::int64_t fix_l0c_read_bps;  // a FIX store's busy part: its L0C read and layout conversion
    std::int64_t l2_bps;        // the chip's L2, shared by every consumer
    std::int64_t hbm_bps;
    std::int64_t remote_store_bps;
    SimTime remote_store_burst_ps;
    std::int64_t remote_read_window_bytes;  // one core's read requests in flight to peers
    SimTime remote_read_round_trip_ps;      // each held for this (inside a node)
    // One core's write requests in flight when its remote stores are posted (0: they are not:
    // a store holds its MTE3 until its bytes land).
    std::int64_t remote_write_window_bytes;
    // The share of a route's rate a write's (a read's) payload gets (interconnect.*_payload_share).
    double write_payload_share;
    double read_payload_share;
    // A cluster's port: its AIC's GM -> L1 rate x P / (P + bytes its AIVs hold in remote reads,
    // their mean over the sample before the load's issue); 0: no shared port.
    std::int64_t cluster_port_bytes;
    SimTime cluster_port_sample_ps;
    // One core's local reads: its requests in flight, an L2 hit's latency (gm_latency_ps) and
    // what a miss adds (sim/mem/read_requests.hpp); no bytes in flight: no bound.
    ReadRequests local_reads;
    std::int64_t sdma_bps;
    SimTime sdma_latency_ps;
    SimTime remote_atomic_ps;
    SimTime local_atomic_ps;
    SimTime launch_host_ps;
    SimTime launch_to_start_ps;
    SimTime kernel_end_ps;
    SimTime sync_ps;
    SimTime host_barrier_ps;
    SimTime host_write_ps;

    SimTime cycles(double n) const { return cycles_to_ps(n, clock_mhz); }
    // The cube's cost for m x k x n with `operands` a and b: cube_fixed_cycles plus the fp16
    // fractal count ceil(m/f) ceil(k/f) ceil(n/f) times the dtype's factor (fp16 1; bf16, int8
    // (int32 accumulate) and fp32: cube_bf16/int8/fp32_cost_factor), over cube_efficiency.
    SimTime cube_ps(int m, int k, int n, DType operands = DType::F16) const;
    // TEXP / TDIV: the per-byte term times vector_transcendental_cost_factor.
    SimTime vector_transcendental_ps(std::int64_t bytes) const;
    // One vector instruction over `bytes` (its widest operand): start-up plus one cycle per
    // `vector_bytes_per_cycle` bytes or part of them.
    SimTime vector_ps(std::int64_t bytes) const;
    // One pass of the sort unit over `elements` keys (with their payload): start-up plus
    // vector_sort_cycles_per_element per element.
    SimTime vector_sort_pass_ps(std::int64_t elements) const;
    SimTime transfer_ps(std::int64_t bytes, std::int64_t bps) const {
        return static_cast<SimTime>(round_half_up_nonneg(static_cast<double>(bytes) * 1.0e12 / static_cast<double>(bps)));
    }
    // One core's rate for a remote store of `bytes` in `bursts` contiguous runs: each run pays
    // remote_store_burst_ps beside its bytes at remote_store_bps (sim/MODEL.md "One core's
    // remote traffic").
    std::int64_t remote_store_rate_bps(std::int64_t bytes, std::int64_t bursts) const;
    // One core's rate reading a peer's GM whose round trip is `round_trip`: the bytes it keeps in
    // flight over the time each is held (sim/MODEL.md "One core's remote traffic").
    std::int64_t remote_read_rate_bps(SimTime round_trip) const;
    // The same for its posted remote stores (remote_write_window_bytes > 0).
    std::int64_t remote_write_rate_bps(SimTime round_trip) const;
    // The smallest latency of any cross-stream effect but a route's (Topology::min_route_latency_ps):
    // with it, the coordinator's lookahead.
    SimTime min_cross_stream_latency() const;
};

}  // namespace tandem
