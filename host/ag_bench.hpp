#pragma once
// The host program's work, as the seed's main.cpp does it per rank: set up the comm world and
// buffers, then the three benchmark views (compute-only, sequential, pipelined), each on the
// simulated clock of the rank's host thread. Functional runs keep every rank's C for checking.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "host/run_config.hpp"
#include "kernels/allgather_gemm/allgather_gemm.hpp"
#include "sim/exec/instr_record.hpp"
#include "sim/mem/zeroed_buffer.hpp"
#include "sim/profile.hpp"

namespace tandem::host {

// Functional inputs: each rank's A slice ((M/n) x K fp16) and B stored transposed (N x K fp16).
struct AgInputs {
    std::vector<std::vector<std::uint16_t>> a_slices;
    std::vector<std::uint16_t> b_transposed;
};

struct RankViewTimes {
    double compute_only_us = 0;
    double seq_comm_us = 0;
    double seq_compute_us = 0;
    double pipelined_us = 0;
};

// A rank's C as the device left it: its GM allocation's bytes, moved out rather than copied
// (fp32, M x N, row-major).
struct DeviceMatrix {
    ZeroedBuffer bytes;
    const float* data() const { return reinterpret_cast<const float*>(bytes.data()); }
    std::span<const float> floats() const { return {data(), bytes.size() / sizeof(float)}; }
};

struct AgBenchOutcome {
    std::vector<RankViewTimes> per_rank;
    RankViewTimes slowest;                   // each view's time on the slowest rank
    std::vector<DeviceMatrix> c;             // functional: every rank's C (M x N fp32)
    std::int64_t instructions = 0;           // simulated instructions over all views
    std::uint64_t windows = 0;               // coordinator windows over all views
    SimTime compute_twait_stall_ps = 0;      // pipelined view, summed over ranks and blocks
    std::vector<InstrRecord> pipelined_log;  // when cfg.record_log: every instruction of the pipelined view
    std::vector<std::int64_t> c_base;        // each rank's C address (to tell phase-1 stores in the log)
    std::vector<std::int64_t> window_base;   // each rank's window address (to name signals)
    SimTime pipelined_start = 0;             // earliest host clock at the pipelined view's start
    SimTime pipelined_end = 0;               // latest host clock at its end
    std::map<int, std::array<SimTime, kPipeCount>> pipelined_busy_ps;  // per rank, both kernels
    std::map<int, std::vector<std::pair<SimTime, std::int64_t>>> pipelined_link_usage;  // when logged
};

// The kernel's shape parameters of a run.
kernels::AgGemmShape shape_of(const RunConfig& cfg);

AgBenchOutcome run_allgather_gemm(const Profile& profile, const RunConfig& cfg, const AgInputs* inputs,
                                  kernels::ComputeFault fault = kernels::ComputeFault::None);

// The default block counts of the seed: one comm/compute block per AIV/AIC core.
int default_compute_blocks(const Profile& p);
int default_comm_blocks(const Profile& p);

}  // namespace tandem::host
