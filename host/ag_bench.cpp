#include "host/ag_bench.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "sim/runtime/runtime.hpp"

namespace tandem::host {

namespace {

using kernels::AgGemmArgs;
using kernels::AgGemmShape;

// Per-rank buffers of the run (the seed's HCCL window, B and C).
struct RankBuffers {
    GmAllocation* window = nullptr;
    GmAllocation* b = nullptr;
    GmAllocation* c = nullptr;
};



// Copy rank `src`'s A slice into `window` at its place in the full A.
void put_slice(GmAllocation& window, const AgGemmArgs& args, int src, const std::vector<std::uint16_t>& slice) {
    const std::int64_t offset = args.window.a_offset + 2LL * src * args.tiling.rows_per_rank * args.tiling.shape.k;
    std::memcpy(window.data.data() + offset, slice.data(), slice.size() * sizeof(std::uint16_t));
}

void clear_remote_slices(GmAllocation& window, const AgGemmArgs& args) {
    const std::int64_t slice_bytes = 2LL * args.tiling.rows_per_rank * args.tiling.shape.k;
    for (int src = 0; src < args.tiling.shape.ranks; ++src) {
        if (src == args.my_rank) continue;
        std::memset(window.data.data() + args.window.a_offset + src * slice_bytes, 0, static_cast<std::size_t>(slice_bytes));
    }
}

// Host-side reset between views: flags and counters to 0 (and, functionally, C to 0).
void reset_flags(HostContext& host, const AgGemmArgs& args) {
    const auto& f = args.window.flags;
    host.write_signals(args.window_base(args.my_rank) + f.flag_offset(0, 0), f.ranks * f.stride, 0);
    host.write_signals(args.window_base(args.my_rank) + f.summary_offset(0), f.ranks, 0);
}

// Compute-only: every chunk of every source marked ready from the host.
void mark_all_ready(HostContext& host, const AgGemmArgs& args) {
    const auto& f = args.window.flags;
    const std::int64_t base = args.window_base(args.my_rank);
    for (int src = 0; src < f.ranks; ++src) host.write_signals(base + f.flag_offset(src, 0), f.chunks, 1);
    host.write_signals(base + f.summary_offset(0), f.ranks, f.chunks);
}

double elapsed_us(SimTime from, SimTime to) { return to_us(to - from); }

}  // namespace

kernels::AgGemmShape shape_of(const RunConfig& cfg) {
    return kernels::AgGemmShape{cfg.ranks, cfg.m, cfg.k, cfg.n, cfg.base_m, cfg.base_n, cfg.chunk_tiles.value_or(0)};
}

int default_compute_blocks(const Profile& p) { return p.chip.aic_cores; }
int default_comm_blocks(const Profile& p) { return p.chip.aiv_cores; }

AgBenchOutcome run_allgather_gemm(const Profile& profile, const RunConfig& cfg, const AgInputs* inputs,
                                  kernels::ComputeFault fault) {
    const bool functional = !cfg.timing_only;
    ClusterOptions options;
    options.ranks = cfg.ranks;
    options.data_mode = functional ? DataMode::Functional : DataMode::TimingOnly;
    options.record_log = cfg.record_log;
    Runtime rt(profile, options);
    Cluster& cluster = rt.cluster();
    const AgGemmShape shape = shape_of(cfg);  // see ag_bench.hpp
    const int compute_blocks = cfg.compute_blocks.value_or(default_compute_blocks(profile));
    const int comm_blocks = cfg.comm_blocks.value_or(default_comm_blocks(profile));

    // Comm world init: every rank's window, B and C (HCCL window exchange done up front).
    std::vector<RankBuffers> buffers(static_cast<std::size_t>(cfg.ranks));
    const kernels::AgGemmTiling tiling(shape);
    const kernels::WindowLayout layout(tiling);
    for (int r = 0; r < cfg.ranks; ++r) {
        GlobalMemory& gm = cluster.chip(r).gm;
        buffers[static_cast<std::size_t>(r)] = RankBuffers{&gm.allocate("window", layout.total_bytes, /*shared=*/true),
                                                           &gm.allocate("B", 2LL * cfg.k * cfg.n),
                                                           &gm.allocate("C", 4LL * cfg.m * cfg.n)};
    }
    std::vector<AgGemmArgs> args;
    args.reserve(static_cast<std::size_t>(cfg.ranks));
    for (int r = 0; r < cfg.ranks; ++r) {
        AgGemmArgs a(shape, r);
        for (const RankBuffers& b : buffers) a.windows.push_back(b.window);
        a.b = buffers[static_cast<std::size_t>(r)].b;
        a.c = buffers[static_cast<std::size_t>(r)].c;
        a.comm_mode = cfg.comm_mode == CommMode::Ring ? kernels::AgCommMode::Ring : kernels::AgCommMode::Mesh;
        a.fault = fault;
        args.push_back(std::move(a));
    }

    AgBenchOutcome out;
    out.per_rank.resize(static_cast<std::size_t>(cfg.ranks));
    out.pipelined_start = kNever;
    std::mutex stats_mu;
    rt.run_hosts([&](HostContext& host) {
        const int r = host.rank();
        const AgGemmArgs& a = args[static_cast<std::size_t>(r)];
        RankBuffers& buf = buffers[static_cast<std::size_t>(r)];
        RankViewTimes& times = out.per_rank[static_cast<std::size_t>(r)];
        Stream& comm = host.create_stream("comm");
        Stream& compute = host.create_stream("compute");
        const KernelLaunch commKernel = kernels::make_comm_kernel(a, comm_blocks);
        const KernelLaunch computeKernel = kernels::make_compute_kernel(a, compute_blocks);
        // The first two views are only timed: the host clears C before the pipelined view, and
        // only the pipelined view's C is written out and verified. So in a functional run they
        // move and compute no data (timing never depends on data; tests check that the times are
        // equal), which makes a functional run cost one GEMM per rank instead of three.
        KernelLaunch commTimed = commKernel;
        KernelLaunch computeTimed = computeKernel;
        commTimed.timing_only = computeTimed.timing_only = true;
        if (functional) {
            std::memcpy(buf.b->data.data(), inputs->b_transposed.data(), inputs->b_transposed.size() * 2);
            put_slice(*buf.window, a, r, inputs->a_slices[static_cast<std::size_t>(r)]);
        }

        // ---- view 1: compute-only ----
        mark_all_ready(host, a);
        host.barrier();
        SimTime t0 = host.now();
        compute.launch(computeTimed);
        compute.synchronize();
        times.compute_only_us = elapsed_us(t0, host.now());

        // ---- view 2: sequential ----
        reset_flags(host, a);
        host.barrier();
        t0 = host.now();
        comm.launch(commTimed);
        comm.synchronize();
        const SimTime t1 = host.now();
        compute.launch(computeTimed);
        compute.synchronize();
        times.seq_comm_us = elapsed_us(t0, t1);
        times.seq_compute_us = elapsed_us(t1, host.now());

        // ---- view 3: pipelined ----
        reset_flags(host, a);
        if (functional) {  // as the seed does between views (nothing wrote them since)
            clear_remote_slices(*buf.window, a);
            std::memset(buf.c->data.data(), 0, buf.c->data.size());
        }
        host.barrier();
        if (cfg.record_log) {  // keep only the pipelined view's log
            if (r == 0) cluster.clear_log();
            host.barrier();
        }
        t0 = host.now();
        comm.launch(commKernel);
        compute.launch(computeKernel);
        comm.synchronize();
        compute.synchronize();
        times.pipelined_us = elapsed_us(t0, host.now());
        const SimTime view_end = host.now();
        host.barrier();

        std::lock_guard lock(stats_mu);
        out.pipelined_start = std::min(out.pipelined_start, t0);
        out.pipelined_end = std::max(out.pipelined_end, view_end);
        auto& busy = out.pipelined_busy_ps[r];
        for (const Stream* s : {&comm, &compute})
            for (int p = 0; p < kPipeCount; ++p)
                busy[static_cast<std::size_t>(p)] += s->kernel_stats().back().busy_ps[static_cast<std::size_t>(p)];
        for (const Stream* s : {&comm, &compute})
            for (const KernelStats& k : s->kernel_stats()) out.instructions += k.instructions;
        // Summed in integer picoseconds: the order the rank threads finish in cannot matter.
        out.compute_twait_stall_ps += compute.kernel_stats().back().twait_stall_ps;
    });
    out.windows = cluster.coordinator().windows();
    if (cfg.record_log) {
        out.pipelined_log = cluster.event_log();
        out.pipelined_link_usage = cluster.link_usage();
    }
    for (const RankBuffers& b : buffers) {
        out.c_base.push_back(b.c->base);
        out.window_base.push_back(b.window->base);
    }
    for (const RankViewTimes& t : out.per_rank) {
        out.slowest.compute_only_us = std::max(out.slowest.compute_only_us, t.compute_only_us);
        out.slowest.seq_comm_us = std::max(out.slowest.seq_comm_us, t.seq_comm_us);
        out.slowest.seq_compute_us = std::max(out.slowest.seq_compute_us, t.seq_compute_us);
        out.slowest.pipelined_us = std::max(out.slowest.pipelined_us, t.pipelined_us);
    }
    if (functional) {
        // The cluster is discarded on return: its C buffers are handed over, not copied.
        for (int r = 0; r < cfg.ranks; ++r) out.c.push_back(DeviceMatrix{std::move(buffers[static_cast<std::size_t>(r)].c->data)});
    }
    return out;
}

}  // namespace tandem::host
