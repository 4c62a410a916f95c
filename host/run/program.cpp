#include "host/run/program.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>

#include <fmt/format.h>

#include "host/io/data_files.hpp"
#include "sim/mem/chip_memory.hpp"
#include "sim/mem/fp16.hpp"
#include "sim/sim_error.hpp"
#include "sim/trace/chrome_trace.hpp"

namespace tandem::host {

namespace {

// A rank's output back in its dtype's bits, for the output file.
std::vector<std::uint16_t> narrowed(DType t, std::span<const float> values) {
    std::vector<std::uint16_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = float_to_bits(t, values[i]);
    return bits;
}

// The output matrices' directory, made if missing (as the seed's gen_data.py does).
void create_out_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw SimError(fmt::format("--out-dir {}: cannot create it: {}", dir.string(), ec.message()));
}

}  // namespace

OpInputs make_inputs(const ResolvedRun& run, int host_threads) {
    return make_op_inputs(run.sharding(), run.params, host_threads);
}

OpInputs read_inputs(const ResolvedRun& run, const std::string& input_dir) {
    const kernels::OpParams& p = run.params;
    OpInputs in;
    const int rows = p.m / p.ranks;
    for (int r = 0; r < p.ranks; ++r)
        in.a.push_back(matrix_of_halves(rows, p.k, read_fp16_file(a_slice_path(input_dir, r), rows, p.k)));
    // B is the same on every rank (the seed writes one file per rank): each is read and checked.
    const std::vector<std::uint16_t> b0 = read_fp16_file(b_transposed_path(input_dir, 0), p.n, p.k);
    for (int r = 1; r < p.ranks; ++r) {
        if (read_fp16_file(b_transposed_path(input_dir, r), p.n, p.k) != b0) {
            throw SimError(fmt::format("--input-dir {}: {} differs from {}; B is the same on every rank",
                                       input_dir, b_transposed_path(input_dir, r).filename().string(),
                                       b_transposed_path(input_dir, 0).filename().string()));
        }
    }
    in.b_t.push_back(matrix_of_halves(p.n, p.k, b0));
    return in;
}

namespace {

// What verification compares with: the golden of the whole output, or each rank's own (an op
// with its own math), and the host inputs when they went through host matrices.
struct Expected {
    OpInputs inputs;
    std::vector<float> golden;
    std::vector<std::vector<float>> own;
};

// Runs the op's views. The golden depends on the inputs only: it is computed while the
// simulation runs, on the host time the simulated streams leave idle (they wait for each other
// at window barriers). The generated inputs are made straight in each rank's GM and the golden
// reads them there (no host copy to make, fill and copy in); inputs read from files, or written
// out to them, go through host matrices.
ViewsOutcome simulate_views(const ResolvedRun& run, const Profile& profile, const RunOutputs& outputs, ViewLog& log,
                            Expected& expected) {
    const kernels::OpParams& params = run.params;
    const kernels::Sharding& sharding = run.sharding();
    const bool timing_only = run.request.timing_only;
    const int threads = outputs.host_threads;  // the host's share this run may use (0: all of it)
    const bool in_place = !timing_only && outputs.input_dir.empty() && !outputs.write_inputs;
    // An op with its own math (kernels::OwnMath) gives each rank's expected output itself.
    const kernels::OwnMath* own = run.op->own_math ? &*run.op->own_math : nullptr;
    if (own != nullptr && !timing_only) {
        // Functional: the host's A and B are placed as for any op (the op's kernels read A and
        // may ignore B), and the op's goldens are computed from them beside the views.
        return run_op_views_in_place(
            profile, run,
            [&](const OpInputs& in_gm) {
                std::vector<kernels::OwnMathInput> xs;
                for (int rank = 0; rank < params.ranks; ++rank) {
                    const HostMatrix& a = in_gm.a[static_cast<std::size_t>(rank)];
                    // An op with its own math takes 2-byte A (moe_ffn: bf16 or fp16 x).
                    const auto* x = reinterpret_cast<const std::uint16_t*>(a.row(0));
                    xs.push_back(kernels::OwnMathInput{x, a.ld(), a.rows, a.cols, in_gm.dtype});
                }
                for (int rank = 0; rank < params.ranks; ++rank) expected.own.push_back(own->golden(params, rank, xs));
            },
            log, threads, outputs.progress);
    }
    if (own != nullptr || timing_only) return run_op_views(profile, run, nullptr, log, threads, outputs.progress);
    if (in_place) {
        return run_op_views_in_place(
            profile, run, [&](const OpInputs& in_gm) { expected.golden = golden_output(sharding, params, in_gm, threads); },
            log, threads, outputs.progress);
    }
    expected.inputs = outputs.input_dir.empty() ? make_inputs(run, threads) : read_inputs(run, outputs.input_dir);
    std::future<std::vector<float>> golden_job;
    if (!outputs.input_dir.empty()) {
        // The seed's files bring their reference C: the outputs are verified against it, as the
        // seed does.
        expected.golden = read_fp32_file(golden_path(outputs.input_dir), params.m, params.n);
    } else {
        golden_job = std::async(std::launch::async, [&] { return golden_output(sharding, params, expected.inputs, threads); });
    }
    ViewsOutcome views = run_op_views(profile, run, &expected.inputs, log, threads, outputs.progress);
    if (golden_job.valid()) expected.golden = golden_job.get();
    return views;
}

// Each rank's output against what it should hold (functional runs); the inputs and golden
// written out when asked.
void verify_outputs(const ResolvedRun& run, const RunOutputs& outputs, const Expected& expected, ProgramOutput& out) {
    const kernels::OpParams& params = run.params;
    const kernels::Sharding& sharding = run.sharding();
    const int threads = outputs.host_threads;
    const kernels::OwnMath* own = run.op->own_math ? &*run.op->own_math : nullptr;
    const Tolerance tol = own != nullptr ? own_math_tolerance(*own, params.out_dtype) : tolerance_for(params.out_dtype);
    bool passed = true;
    for (int rank = 0; rank < params.ranks; ++rank) {
        // Only a column-split output needs its own slice of the golden; the others compare
        // with the golden itself (no 4-byte-per-element copy of it per rank).
        const float* actual = out.bench.out[static_cast<std::size_t>(rank)].data();
        out.verification.push_back(
            own != nullptr ? verify_rank(rank, actual, expected.own[static_cast<std::size_t>(rank)], tol, threads)
            : sharding.out == kernels::Split::Cols
                ? verify_rank(rank, actual, expected_for_rank(sharding, params, expected.golden, rank), tol, threads)
                : verify_rank(rank, actual, expected.golden, tol, threads));
        passed = passed && out.verification.back().passed;
    }
    out.results.verification = passed ? Verification::Passed : Verification::Failed;
    if (!passed) {
        out.failure_report = describe_failures(out.verification, shard_shapes(sharding, params).out_cols);
        if (tol.rule != Tolerance::Rule::AbsAndRel) out.failure_report += "  (rule: " + tol.describe() + ")\n";
    }
    if (outputs.write_inputs && own == nullptr) {
        create_out_dir(outputs.out_dir);
        write_fp32_file(golden_path(outputs.out_dir), expected.golden, params.m, params.n);
        for (int rank = 0; rank < params.ranks; ++rank) {
            const HostMatrix& a = expected.inputs.a[static_cast<std::size_t>(rank)];
            const HostMatrix& b = expected.inputs.b_of(rank);
            write_fp16_file(a_slice_path(outputs.out_dir, rank), halves_of(a), a.rows, a.cols);
            write_fp16_file(b_transposed_path(outputs.out_dir, rank), halves_of(b), b.rows, b.cols);
        }
    }
}

// The run's figures beside the four views: per rank, the rank mean, the traffic, each launch as
// a profiler reports it, the stages, the variant's effective knobs.
void add_run_figures(const ResolvedRun& run, const ViewsOutcome& bench, RunResults& r) {
    const kernels::OpParams& params = run.params;
    nlohmann::json per_rank = nlohmann::json::array();
    for (const RankViewTimes& t : bench.per_rank) {
        per_rank.push_back({{"compute_only_us", t.compute_only_us},
                            {"seq_comm_us", t.seq_comm_us},
                            {"seq_compute_us", t.seq_compute_us},
                            {"pipelined_us", t.pipelined_us}});
    }
    r.extras["per_rank"] = per_rank;
    r.extras["views_reported_from"] = "slowest rank per view";
    if (run.op->own_math && run.op->own_math->extras)
        for (const auto& [name, values] : run.op->own_math->extras(params)) r.extras[name] = values;
    // The seed's published times are averages; its per-rank reading is not stated, so the rank
    // mean is reported beside the slowest rank (the fidelity check compares the mean: sim/CALIBRATION.md).
    double sum = 0;
    double lowest = bench.per_rank.empty() ? 0 : bench.per_rank.front().pipelined_us;
    for (const RankViewTimes& t : bench.per_rank) {
        sum += t.pipelined_us;
        lowest = std::min(lowest, t.pipelined_us);
    }
    r.extras["pipelined_rank_mean_us"] = bench.per_rank.empty() ? 0.0 : sum / static_cast<double>(bench.per_rank.size());
    r.extras["pipelined_rank_min_us"] = lowest;
    // The traffic the pipelined view actually put on the interconnect, per rank (the busiest
    // rank's loads + stores), beside the collective's payload (allgather_bytes): a variant that
    // re-reads remote data (all_gather_matmul's pull) shows it here.
    std::int64_t comm_bytes = 0;
    for (const RankViewTimes& t : bench.per_rank) comm_bytes = std::max(comm_bytes, t.remote_load_bytes + t.remote_store_bytes);
    r.extras["comm_bytes_per_rank"] = comm_bytes;
    r.extras["comm_gib_s"] = bench.slowest.pipelined_us > 0
                                 ? static_cast<double>(comm_bytes) / (bench.slowest.pipelined_us * 1e-6) / (1024.0 * 1024.0 * 1024.0)
                                 : 0.0;
    // Each launch of each view as a profiler reports it: device time and pipe use.
    std::vector<std::vector<KernelFigures>> figures;
    for (const RankViewTimes& t : bench.per_rank) figures.push_back(t.kernels);
    r.extras["kernels"] = kernels_json(figures, bench.stream_names, bench.stage_names);
    if (nlohmann::json stages = pipelined_stages_json(r.extras["kernels"]); !stages.is_null())
        r.extras["pipelined_stages"] = std::move(stages);
    r.extras["simulated_instructions"] = bench.instructions;
    r.extras["compute_twait_stall_us"] = to_us(bench.compute_twait_stall_ps);
    if (run.variant->effective_knobs) {
        for (const auto& [name, value] : run.variant->effective_knobs(params)) r.extras[name] = value;
    }
}

}  // namespace

ProgramOutput run_program(const ResolvedRun& run, const Profile& profile, const RunOutputs& outputs) {
    const auto wall_start = std::chrono::steady_clock::now();
    // A trace of some ranks keeps only their instructions; an event log asked for keeps all.
    ViewLog log;
    log.keep = outputs.record_log || !outputs.trace_file.empty();
    if (!outputs.record_log) log.ranks = outputs.trace_ranks;
    ProgramOutput out;
    Expected expected;
    out.bench = simulate_views(run, profile, outputs, log, expected);
    RunResults& r = out.results;
    r.id = make_identity(run);
    r.times = ViewTimes{out.bench.slowest.compute_only_us, out.bench.slowest.seq_comm_us,
                        out.bench.slowest.seq_compute_us, out.bench.slowest.pipelined_us};
    r.verification = Verification::Skipped;
    if (!run.request.timing_only) verify_outputs(run, outputs, expected, out);
    add_run_figures(run, out.bench, r);
    out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return out;
}

namespace {

// The rank other than 0 whose pipelined view took longest (the lowest of equals); 0 when rank 0
// is alone.
int slowest_other_rank(const ViewsOutcome& bench) {
    int slowest = bench.per_rank.size() > 1 ? 1 : 0;
    for (std::size_t r = 2; r < bench.per_rank.size(); ++r) {
        if (bench.per_rank[r].pipelined_us > bench.per_rank[static_cast<std::size_t>(slowest)].pipelined_us)
            slowest = static_cast<int>(r);
    }
    return slowest;
}

}  // namespace

std::string describe_trace(const std::string& path, const TraceWritten& t, int ranks) {
    std::string which;
    if (t.ranks.empty()) {
        which = fmt::format("every rank of {}", ranks);
    } else if (t.default_ranks) {
        which = fmt::format("ranks 0 and {} of {} (rank 0 and the slowest other rank; --trace-ranks all keeps every rank)",
                            t.ranks.back(), ranks);
    } else {
        which = fmt::format("rank{} {} of {} (--trace-ranks)", t.ranks.size() == 1 ? "" : "s", fmt::join(t.ranks, ", "), ranks);
    }
    const std::string window = t.window_us ? fmt::format("the events overlapping {:g}..{:g} us of the pipelined view",
                                                         t.window_us->first, t.window_us->second)
                                           : std::string("the whole pipelined view");
    return fmt::format("{} ({:.1f} MB): {}, {}", path, static_cast<double>(t.bytes) / 1e6, which, window);
}

TraceWritten write_trace(const RunOutputs& outputs, const Profile& profile, const ProgramOutput& out) {
    TraceInput in;
    in.log = &out.bench.pipelined_log;
    in.stream_names = out.bench.stream_names;
    in.stage_names = out.bench.stage_names;
    in.view_start = out.bench.pipelined_start;
    in.view_end = out.bench.pipelined_end;
    in.busy_ps = out.bench.pipelined_busy_ps;
    in.link_usage = out.bench.pipelined_link_usage;
    in.memory_usage = out.bench.pipelined_memory_usage;
    in.memory_bin_ps = kMemUsageBinPs;
    in.machine = out.bench.trace_machine;  // taken from the run's machine while it lived
    in.metadata = to_json(out.results);
    in.metadata["profile_file"] = profile.file.string();
    in.metadata["aic_cores"] = profile.chip.aic_cores;
    in.metadata["aiv_cores"] = profile.chip.aiv_cores;
    in.signal_name = out.bench.signal_name;
    TraceWritten t;
    t.ranks = outputs.trace_ranks;
    if (t.ranks.empty() && outputs.trace_default_ranks && out.bench.per_rank.size() > 2) {
        t.default_ranks = true;
        t.ranks = {0, slowest_other_rank(out.bench)};
    }
    t.window_us = outputs.trace_window_us;
    write_chrome_trace(outputs.trace_file, in, TraceFilter{t.ranks, t.window_us});
    std::error_code ec;
    t.bytes = std::filesystem::file_size(outputs.trace_file, ec);
    if (ec) t.bytes = 0;
    return t;
}

void write_program_files(const ResolvedRun& run, const RunOutputs& outputs, const ProgramOutput& out) {
    if (run.request.timing_only) return;
    create_out_dir(outputs.out_dir);
    const DType t = run.params.out_dtype;
    const ShardShapes sh = shard_shapes(run.sharding(), run.params);
    for (int rank = 0; rank < run.params.ranks; ++rank) {
        const std::span<const float> values = out.bench.out[static_cast<std::size_t>(rank)].floats();
        if (t == DType::F32 || t == DType::I8) {  // int8 (moe_dispatch's rows): their values as fp32
            write_fp32_file(output_path(outputs.out_dir, rank), values, sh.out_rows, sh.out_cols);
        } else {
            write_fp16_file(output_path(outputs.out_dir, rank), narrowed(t, values), sh.out_rows, sh.out_cols);
        }
    }
}

}  // namespace tandem::host
