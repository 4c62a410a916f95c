#include "sim/core/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace tandem {

namespace {
std::int64_t gib_s_to_bps(double gib_s) { return static_cast<std::int64_t>(std::llround(gib_s * 1073741824.0)); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }
}  // namespace

CostModel::CostModel(const Profile& p)
    : clock_mhz(p.chip.core_clock_mhz),
      issue_ps(cycles_to_ps(p.pipes.scalar_issue_cycles, p.chip.core_clock_mhz)),
      set_flag_ps(cycles_to_ps(p.pipes.set_flag_cycles, p.chip.core_clock_mhz)),
      wait_flag_ps(cycles_to_ps(p.pipes.wait_flag_cycles, p.chip.core_clock_mhz)),
      pipe_barrier_ps(cycles_to_ps(p.pipes.pipe_barrier_cycles, p.chip.core_clock_mhz)),
      twait_poll_ps(cycles_to_ps(p.pipes.twait_poll_cycles, p.chip.core_clock_mhz)),
      gm_latency_ps(cycles_to_ps(p.pipes.gm_access_latency_cycles, p.chip.core_clock_mhz)),
      mte1_latency_ps(cycles_to_ps(p.pipes.mte1_latency_cycles, p.chip.core_clock_mhz)),
      cube_fixed_cycles(p.pipes.cube_fixed_cycles),
      cube_fractal(p.pipes.cube_fractal),
      cube_efficiency(p.pipes.cube_efficiency),
      cube_bf16_factor(p.pipes.cube_bf16_cost_factor),
      cube_int8_factor(p.pipes.cube_int8_cost_factor),
      cube_fp32_factor(p.pipes.cube_fp32_cost_factor),
      vector_transcendental_factor(p.pipes.vector_transcendental_cost_factor),
      vector_sort_cycles_per_element(p.pipes.vector_sort_cycles_per_element),
      vector_bytes_per_cycle(p.pipes.vector_bytes_per_cycle),
      vector_startup_cycles(p.pipes.vector_startup_cycles),
      cross_core_flag_ps(cycles_to_ps(p.pipes.cross_core_flag_latency_cycles, p.chip.core_clock_mhz)),
      gm_to_l1_bps(gib_s_to_bps(p.pipes.gm_to_l1_gib_s)),
      gm_to_ub_bps(gib_s_to_bps(p.pipes.gm_to_ub_gib_s)),
      ub_to_gm_bps(gib_s_to_bps(p.pipes.ub_to_gm_gib_s)),
      l1_to_l0a_bps(gib_s_to_bps(p.pipes.l1_to_l0a_gib_s)),
      l1_to_l0b_bps(gib_s_to_bps(p.pipes.l1_to_l0b_gib_s)),
      l0c_to_gm_bps(gib_s_to_bps(p.pipes.l0c_to_gm_gib_s)),
      fix_l0c_read_bps(gib_s_to_bps(p.pipes.fix_l0c_read_gib_s)),
      l2_bps(gib_s_to_bps(p.chip.l2_gib_s)),
      hbm_bps(gib_s_to_bps(p.chip.hbm_gib_s)),
      remote_store_bps(gib_s_to_bps(p.interconnect.remote_store_gib_s)),
      remote_store_burst_ps(from_ns(p.interconnect.remote_store_burst_ns)),
      remote_read_window_bytes(p.interconnect.remote_read_window_bytes),
      remote_read_round_trip_ps(std::max<SimTime>(1, from_ns(p.interconnect.remote_read_round_trip_ns))),
      remote_write_window_bytes(p.interconnect.remote_write_window_bytes),
      write_payload_share(p.interconnect.write_payload_share),
      read_payload_share(p.interconnect.read_payload_share),
      cluster_port_bytes(p.pipes.cluster_port_bytes),
      cluster_port_sample_ps(from_ns(p.pipes.cluster_port_sample_ns)),
      local_reads{p.pipes.mte2_read_bytes_in_flight, cycles_to_ps(p.pipes.gm_access_latency_cycles, p.chip.core_clock_mhz),
                  cycles_to_ps(p.pipes.hbm_miss_latency_cycles, p.chip.core_clock_mhz)},
      sdma_bps(gib_s_to_bps(p.interconnect.sdma_gib_s)),
      sdma_latency_ps(from_ns(p.interconnect.sdma_latency_ns)),
      remote_atomic_ps(from_ns(p.interconnect.remote_atomic_latency_ns)),
      local_atomic_ps(from_ns(p.interconnect.local_atomic_latency_ns)),
      launch_host_ps(from_us(p.host.launch_host_us)),
      launch_to_start_ps(from_us(p.host.launch_to_start_us)),
      kernel_end_ps(from_us(p.host.kernel_end_us)),
      sync_ps(from_us(p.host.sync_us)),
      host_barrier_ps(from_us(p.host.host_barrier_us)),
      host_write_ps(from_us(p.host.host_write_latency_us)) {}

SimTime CostModel::cube_ps(int m, int k, int n, DType operands) const {
    const double fractals = static_cast<double>(ceil_div(m, cube_fractal)) * ceil_div(k, cube_fractal) *
                            ceil_div(n, cube_fractal);
    switch (operands) {
        case DType::BF16: return cycles(cube_fixed_cycles + fractals * cube_bf16_factor / cube_efficiency);
        case DType::I8: return cycles(cube_fixed_cycles + fractals * cube_int8_factor / cube_efficiency);
        case DType::F32: return cycles(cube_fixed_cycles + fractals * cube_fp32_factor / cube_efficiency);
        default: return cycles(cube_fixed_cycles + fractals / cube_efficiency);
    }
}

SimTime CostModel::vector_transcendental_ps(std::int64_t bytes) const {
    return cycles(vector_startup_cycles +
                  std::ceil(static_cast<double>(bytes) * vector_transcendental_factor / vector_bytes_per_cycle));
}

SimTime CostModel::vector_sort_pass_ps(std::int64_t elements) const {
    return cycles(vector_startup_cycles + std::ceil(static_cast<double>(elements) * vector_sort_cycles_per_element));
}

SimTime CostModel::vector_ps(std::int64_t bytes) const {
    return cycles(vector_startup_cycles + std::ceil(static_cast<double>(bytes) / vector_bytes_per_cycle));
}

std::int64_t CostModel::remote_store_rate_bps(std::int64_t bytes, std::int64_t bursts) const {
    if (remote_store_burst_ps == 0 || bytes <= 0) return remote_store_bps;
    const double seconds = static_cast<double>(bytes) / static_cast<double>(remote_store_bps) +
                           static_cast<double>(bursts) * static_cast<double>(remote_store_burst_ps) * 1.0e-12;
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(bytes) / seconds));
}

namespace {
// Requests of `window` bytes in flight, each held for `round_trip`: the rate they give one core.
std::int64_t window_rate_bps(std::int64_t window, SimTime round_trip) {
    const double bps = static_cast<double>(window) * 1.0e12 / static_cast<double>(std::max<SimTime>(1, round_trip));
    return std::max<std::int64_t>(1, std::llround(bps));
}
}  // namespace

std::int64_t CostModel::remote_read_rate_bps(SimTime round_trip) const {
    return window_rate_bps(remote_read_window_bytes, round_trip);
}

std::int64_t CostModel::remote_write_rate_bps(SimTime round_trip) const {
    return window_rate_bps(remote_write_window_bytes, round_trip);
}

SimTime CostModel::min_cross_stream_latency() const {
    return std::max<SimTime>(1, std::min({remote_atomic_ps, local_atomic_ps, host_write_ps}));
}

}  // namespace tandem
